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

namespace {

// "0-31, 64-95": ascending thread numbers as ranges.
std::string fmtRanges(const std::vector<unsigned>& ids) {
    std::string out;
    for (size_t i = 0; i < ids.size();) {
        size_t e = i;
        while (e + 1 < ids.size() && ids[e + 1] == ids[e] + 1) ++e;
        if (!out.empty()) out += ", ";
        out += std::to_string(ids[i]);
        if (e > i) out += "-" + std::to_string(ids[e]);
        i = e + 1;
    }
    return out;
}

// Where thread `t` is, as a verb phrase for one thread and for several.
std::pair<std::string, std::string> whereThreadIs(const Worker& w, const Thread& t) {
    switch (t.state) {
        case State::Exited: return {"has finished", "have finished"};
        case State::AtBarrier:
        case State::AtWarp: {
            const std::string at = std::string(t.opName) + " at " + formatSite(t.site);
            return {"waits at " + at, "wait at " + at};
        }
        case State::AtActiveMask: return {"waits in __activemask()", "wait in __activemask()"};
        default: break;
    }
    std::string at;
    if (t.linear < w.spinStacks.size()) {
        const SpinStack& s = w.spinStacks[t.linear];
        if (s.depth > 0) at = describeStudentCode(s.pcs, size_t(s.depth), false);
    }
    if (at.empty()) return {"spins", "spin"};
    return {"spins at " + at, "spin at " + at};
}

}  // namespace

std::string describeThreads(Worker& w) {
    struct Group {
        std::pair<std::string, std::string> where;
        std::vector<unsigned> ids;
    };
    std::vector<Group> groups;
    // threadIdx.x in a one-dimensional block; else the thread's linear number.
    const bool flat = w.launch->block.y == 1 && w.launch->block.z == 1;
    for (const Thread& t : w.threads) {
        auto where = whereThreadIs(w, t);
        auto it = std::find_if(groups.begin(), groups.end(),
                               [&](const Group& g) { return g.where == where; });
        if (it == groups.end()) it = groups.insert(groups.end(), Group{std::move(where), {}});
        it->ids.push_back(t.linear);
    }
    std::string s;
    for (const Group& g : groups) {
        if (!s.empty()) s += "; ";
        const bool one = g.ids.size() == 1;
        s += (one ? "thread " : "threads ") + fmtRanges(g.ids) +
             (flat ? "" : " (linear)") + " of block " + fmtDim(tlsBuiltins.bIdx) + " " +
             (one ? g.where.first : g.where.second);
    }
    return s;
}

}  // namespace scanlab::emu::detail
