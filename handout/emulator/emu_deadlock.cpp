// scanlab CPU emulator: why a block cannot go on.
// (emu_scheduler.h lists the parts.)
#include "emulator/emu_scheduler.h"

namespace scanlab::emu::detail {

// ---------------------------------------------------------------------------------
// Why a block cannot go on: every live thread waits.

std::string describeStuck(Worker& w, std::string& headline) {
    struct Group {
        const char* op;
        Site site;
        unsigned mask;
        unsigned count;
        unsigned first;
    };
    std::vector<Group> barrier, warpOps;
    for (const Thread& t : w.threads) {
        if (t.state == State::AtBarrier || t.state == State::AtWarp) {
            auto& groups = t.state == State::AtBarrier ? barrier : warpOps;
            const unsigned mask = t.state == State::AtWarp ? t.mask : 0;
            auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
                return g.op == t.opName && g.mask == mask && sameSite(g.site, t.site);
            });
            if (it == groups.end()) {
                groups.push_back(Group{t.opName, t.site, mask, 1, t.linear});
            } else {
                ++it->count;
            }
        }
    }
    const std::string N = std::to_string(w.nThreads);
    const std::string exitedText =
        w.exited == 0 ? std::string()
                      : std::to_string(w.exited) + " exited without reaching it (the first: " +
                            threadName(w.threads[w.firstExited]) + ")";
    if (warpOps.empty() && barrier.size() == 1) {
        headline = "barrier divergence";
        const Group& g = barrier[0];
        return std::string(g.op) + " at " + formatSite(g.site) + " reached by " +
               std::to_string(g.count) + " of " + N + " threads; the other " + exitedText +
               ". Every thread of a block must reach the same __syncthreads(): do not put it in "
               "a branch or loop that only some threads enter, and do not return early";
    }
    if (warpOps.empty()) {
        headline = "barrier divergence";
        std::string s = "threads wait at different __syncthreads() calls: ";
        for (size_t i = 0; i < barrier.size(); ++i) {
            if (i) s += ", ";
            s += std::to_string(barrier[i].count) + " at " + formatSite(barrier[i].site) +
                 " (e.g. " + threadName(w.threads[barrier[i].first]) + ")";
        }
        if (w.exited) s += "; " + std::to_string(w.exited) + " threads exited";
        return s + ". Every thread of a block must reach the same __syncthreads()";
    }
    headline = "deadlock";
    std::string s = "no thread can go on: ";
    bool firstGroup = true;
    for (const Group& g : barrier) {
        s += (firstGroup ? "" : "; ") + std::to_string(g.count) + " thread(s) wait at " + g.op +
             " at " + formatSite(g.site);
        firstGroup = false;
    }
    for (const Group& g : warpOps) {
        s += (firstGroup ? "" : "; ") + std::to_string(g.count) + " thread(s) wait at " + g.op +
             " at " + formatSite(g.site) + " with mask " + fmtMask(g.mask) + " (e.g. " +
             threadName(w.threads[g.first]) + ")";
        firstGroup = false;
    }
    if (w.exited) s += "; " + std::to_string(w.exited) + " thread(s) exited";
    // Explain the first warp wait: which lanes of its mask are elsewhere.
    const Thread& t = w.threads[warpOps[0].first];
    const unsigned warp = t.linear / 32;
    std::string why;
    for (unsigned m = t.mask; m; m &= m - 1) {
        const unsigned l = unsigned(__builtin_ctz(m));
        const Thread& o = laneThread(w, warp, l);
        if (o.state == State::AtWarp && o.mask == t.mask && o.kind == t.kind) continue;
        why = "lane " + std::to_string(t.linear % 32) + " (" + threadName(t) + ") waits for lane " +
              std::to_string(l) + " (" + threadName(o) + "), which ";
        if (o.state == State::AtBarrier) {
            why += "waits at __syncthreads() at " + formatSite(o.site);
        } else if (o.state == State::AtWarp) {
            why += "waits at " + std::string(o.opName) + " at " + formatSite(o.site) +
                   " with mask " + fmtMask(o.mask);
        } else {
            why += "has exited";
        }
        break;
    }
    if (!why.empty()) s += ". " + why;
    return s;
}

}  // namespace scanlab::emu::detail
