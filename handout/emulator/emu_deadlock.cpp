// scanlab CPU emulator: why a block cannot go on.
// (emu_scheduler.h lists the parts.)
#include <execinfo.h>
#include <sched.h>

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

// ---------------------------------------------------------------------------------
// A spin that nothing can end: the deadlock vote of the workers.

// Once the block looks stuck, where `self` spins: its call stack (once, then every
// 1024 forced yields of the block, in case it moved on to another wait).
void recordSpinStack(Worker& w, Thread* self) {
    if (w.spinStacks.size() != w.nThreads) {
        w.spinStacks.resize(w.nThreads);
        for (SpinStack& s : w.spinStacks) s.depth = 0;
    }
    SpinStack& s = w.spinStacks[self->linear];
    if (s.depth == 0 || (w.spinsWithoutProgress & 1023) == 0)
        s.depth = backtrace(const_cast<void**>(s.pcs), SpinStack::kFrames);
}

// This worker's vote, at a forced yield of its stuck block, that nothing in the launch
// moves: true when the launch is deadlocked. A worker votes once it has spun `budget`
// forced yields of its own in the current round (no block made progress since the round
// began). When all `voters` have voted, a second round begins at once and they must all
// vote again: a vote cast before a worker moved on (and the OS paused it before its
// next barrier) does not count. A worker the OS has paused casts no vote, so a block
// about to set what the others wait for is never outvoted: the verdict waits for it.
bool deadlockVote(Worker& w, Launch& L, unsigned voters, uint64_t budget) {
    const uint64_t r = L.round.load(std::memory_order_relaxed);
    if (r != w.voteRound) {
        w.voteRound = r;
        w.roundYields = 0;
        w.voted = false;
    }
    if (w.voted || ++w.roundYields < budget) return false;
    w.voted = true;
    std::lock_guard<std::mutex> lock(L.voteMutex);
    if (L.round.load() != r) return false;  // progress meanwhile
    if (L.voteRound != r) {
        L.voteRound = r;
        L.votes = 0;
    }
    if (++L.votes < voters) return false;
    if (L.confirmRound == r) return true;
    L.confirmRound = L.round.fetch_add(1) + 1;
    return false;
}

// A forced yield in a spin loop (preemptSlow): the block's progress is checked. Once
// the block has spun kStuckYields without a barrier or an exit it is stuck, its worker
// gives its core to the OS every kGiveCoreEvery forced yields (a worker whose block can
// go on may be waiting for one), and it takes part in the deadlock vote (deadlockVote). Blocks still
// to start: every worker the pool gives the launch votes, for kStartVoteYields (the
// running blocks wait for one that cannot start). Every block started: every worker
// still running one votes, for kHangVoteYields (a flag nobody sets).
void checkSpinning(Worker& w, Thread* self) {
    Launch& L = *w.launch;
    if (L.failed.load(std::memory_order_relaxed)) {
        w.stoppedByOther = true;
        SCANLAB_EMU_FAIL(w, self, "stopped", "another block of the launch failed first");
    }
    if (++w.spinsWithoutProgress < kStuckYields) return;
    if (!w.stuck) {
        w.stuck = true;
        L.stuck.fetch_add(1);
    }
    recordSpinStack(w, self);
    if (L.participants > 1 && (w.spinsWithoutProgress & (kGiveCoreEvery - 1)) == 0) sched_yield();
    const uint64_t started = std::min<uint64_t>(L.next.load(), L.blocks);
    if (started >= L.blocks) {
        const unsigned running = L.workers.load();
        if (!deadlockVote(w, L, running, kHangVoteYields)) return;
        std::string detail = "every block of the launch has started, and every block still "
                             "running (" + std::to_string(running) + " here) has spun "
                             "(atomics, fences, __nanosleep) without any block passing a "
                             "barrier or ending a thread, twice for " +
                             std::to_string(kHangVoteYields) + " forced yields of its own "
                             "worker (its running time: a loaded machine delays this verdict, "
                             "it never causes it): " + describeThreads(w) +
                             ". A wait for a flag or counter that no thread sets never ends, "
                             "on a GPU as here";
        SCANLAB_EMU_FAIL(w, self, "deadlock", detail);
    }
    if (!deadlockVote(w, L, L.participants, kStartVoteYields)) return;
    std::string waiting;
    for (uint64_t k = started; k < L.blocks && k < started + 8; ++k) {
        waiting += (waiting.empty() ? "" : ", ") +
                   fmtDim(blockIndexOf(L, L.blockAt(k)));
    }
    if (L.blocks - started > 8) waiting += ", ...";
    std::string spinning = threadName(*self);
    if (const SpinStack& s = w.spinStacks[self->linear]; s.depth > 0) {
        if (const std::string line = describeStudentCode(s.pcs, size_t(s.depth), false);
            !line.empty())
            spinning += " (at " + line + ")";
    }
    SCANLAB_EMU_FAIL(w, self, "deadlock between blocks",
                     spinning + " has spun (atomics, fences, __nanosleep) without progress while "
                     "block(s) " + waiting + " of the same launch have not started, and every "
                     "block that has (" + std::to_string(L.participants) + " run at once here) "
                     "spins too. Blocks start in any order, on a GPU as here: a block must never "
                     "wait for another block of its launch that may not have started (take tile "
                     "ids from an atomic counter, so that every block you wait for has)");
}

}  // namespace scanlab::emu::detail
