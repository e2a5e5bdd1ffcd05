// scanlab CPU emulator: warp operations.
// (emu_scheduler.h lists the parts.)
#include "emulator/emu_race.h"
#include "emulator/emu_scheduler.h"

namespace scanlab::emu::detail {

namespace {

// ---------------------------------------------------------------------------------
// Warp operations.

const char* shuffleName(ShflMode m) {
    switch (m) {
        case ShflMode::Idx: return "__shfl_sync";
        case ShflMode::Up: return "__shfl_up_sync";
        case ShflMode::Down: return "__shfl_down_sync";
        case ShflMode::Xor: return "__shfl_xor_sync";
    }
    return "?";
}
const char* voteName(VoteMode m) {
    switch (m) {
        case VoteMode::Ballot: return "__ballot_sync";
        case VoteMode::Any: return "__any_sync";
        case VoteMode::All: return "__all_sync";
    }
    return "?";
}

// What is wrong with a warp operation's mask, seen from the calling lane: the one
// definition of a valid mask, used by the fast path and by the diagnosis.
enum class MaskProblem { None, LeavesOutCaller, NamesMissingLanes, NamesExitedLanes };

inline MaskProblem maskProblem(const Warp& W, unsigned lane, unsigned mask) {
    if (!(mask >> lane & 1)) return MaskProblem::LeavesOutCaller;
    if (mask & ~W.existing) return MaskProblem::NamesMissingLanes;
    if (mask & W.exited) return MaskProblem::NamesExitedLanes;
    return MaskProblem::None;
}

[[noreturn, gnu::cold, gnu::noinline]] void badMask(Worker& w, Thread* self, unsigned mask,
                                                   Site site, const char* op, MaskProblem problem) {
    const unsigned warp = self->linear / 32, lane = self->linear % 32;
    const Warp& W = w.warps[warp];
    const std::string at = std::string(op) + " at " + formatSite(site) + ": mask " + fmtMask(mask);
    switch (problem) {
        case MaskProblem::LeavesOutCaller:
            SCANLAB_EMU_FAIL(w, self, "bad warp mask",
                             at + " leaves out participating lane " + std::to_string(lane) + " (" +
                                 threadName(*self) +
                                 "); every lane that calls a _sync warp operation must be in its mask",
                             int(warp));
        case MaskProblem::NamesMissingLanes:
            SCANLAB_EMU_FAIL(w, self, "bad warp mask",
                             at + " names lane(s) " + fmtLanes(mask & ~W.existing) +
                                 ", which do not exist (the block has " + std::to_string(w.nThreads) +
                                 " threads, so its last warp is partial)",
                             int(warp));
        case MaskProblem::NamesExitedLanes: {
            const unsigned gone = mask & W.exited;
            SCANLAB_EMU_FAIL(w, self, "warp divergence",
                             at + " names lane(s) " + fmtLanes(gone) + ", which already exited (e.g. " +
                                 threadName(laneThread(w, warp, unsigned(__builtin_ctz(gone)))) +
                                 "); every lane named in the mask must reach the operation",
                             int(warp));
        }
        case MaskProblem::None: break;
    }
    std::abort();  // not reached: called only for a bad mask
}

// Checks that apply to every warp operation at the call (the fast path).
inline void checkMask(Worker& w, Thread* self, unsigned mask, Site site, const char* op) {
    const MaskProblem problem = maskProblem(w.warps[self->linear / 32], self->linear % 32, mask);
    if (__builtin_expect(problem != MaskProblem::None, 0)) badMask(w, self, mask, site, op, problem);
}

[[noreturn, gnu::cold, gnu::noinline]] void differentOps(Worker& w, Thread* self, const Thread& o,
                                                        unsigned warp, unsigned mask) {
    SCANLAB_EMU_FAIL(w, self, "warp divergence",
                      "the lanes of mask " + fmtMask(mask) +
                          " meet at different warp operations: lane " +
                          std::to_string(self->linear % 32) + " at " + self->opName + " (" +
                          formatSite(self->site) + "), lane " + std::to_string(o.linear % 32) +
                          " at " + o.opName + " (" + formatSite(o.site) + ")",
                      int(warp));
}

// All lanes of `mask` wait at a warp operation with this mask: compute the results
// and release them.
void completeWarpOp(Worker& w, Thread* self, Warp& W, unsigned warp, unsigned mask) {
    ++w.profileWarpOps;
    raceWarpSync(w, warp);
    for (unsigned m = mask; m; m &= m - 1) {
        const Thread& o = laneThread(w, warp, unsigned(__builtin_ctz(m)));
        if (__builtin_expect(o.kind != self->kind, 0)) differentOps(w, self, o, warp, mask);
    }
    if (self->kind == WarpKind::Shuffle) {
        for (unsigned m = mask; m; m &= m - 1) {
            Thread& o = laneThread(w, warp, unsigned(__builtin_ctz(m)));
            o.result = laneThread(w, warp, unsigned(o.src)).value;
        }
    } else if (self->kind == WarpKind::Vote) {
        unsigned ballot = 0;
        for (unsigned m = mask; m; m &= m - 1) {
            const unsigned l = unsigned(__builtin_ctz(m));
            if (laneThread(w, warp, l).predicate) ballot |= 1u << l;
        }
        for (unsigned m = mask; m; m &= m - 1) {
            Thread& o = laneThread(w, warp, unsigned(__builtin_ctz(m)));
            switch (o.voteMode) {
                case VoteMode::Ballot: o.result = ballot; break;
                case VoteMode::Any: o.result = ballot != 0; break;
                case VoteMode::All: o.result = ballot == mask; break;
            }
        }
    }
    for (unsigned m = mask; m; m &= m - 1) {
        makeRunnable(w, laneThread(w, warp, unsigned(__builtin_ctz(m))));
    }
    W.waiting &= ~mask;
    if (W.mixed) {
        // Recompute whether the lanes still waiting share one mask.
        W.mixed = false;
        bool firstLane = true;
        for (unsigned m = W.waiting; m; m &= m - 1) {
            const unsigned mk = laneThread(w, warp, unsigned(__builtin_ctz(m))).mask;
            if (firstLane) {
                W.commonMask = mk;
                firstLane = false;
            } else if (mk != W.commonMask) {
                W.mixed = true;
            }
        }
    }
}

// A bad shuffle: a width that is not a power of two (source < 0), or a source lane
// outside the mask.
[[noreturn, gnu::cold, gnu::noinline]] void badShuffle(Worker& w, Thread* self, Site site,
                                                      const char* op, unsigned mask, int source,
                                                      int width) {
    const unsigned warp = self->linear / 32;
    if (source < 0) {
        SCANLAB_EMU_FAIL(w, self, "bad shuffle",
                         std::string(op) + " at " + formatSite(site) + ": width " +
                             std::to_string(width) + " is not a power of two from 1 to 32",
                         int(warp));
    }
    SCANLAB_EMU_FAIL(w, self, "bad shuffle",
                     std::string(op) + " at " + formatSite(site) + ": lane " +
                         std::to_string(self->linear % 32) + " (" + threadName(*self) +
                         ") reads lane " + std::to_string(source) + ", which is outside mask " +
                         fmtMask(mask) + "; a shuffle may only read lanes named in its mask",
                     int(warp));
}

// Lane `self` arrives with a mask that differs from the one lane `o` waits with,
// though each names the other.
[[noreturn, gnu::cold, gnu::noinline]] void maskMismatch(Worker& w, Thread* self, const Thread& o) {
    const unsigned warp = self->linear / 32;
    SCANLAB_EMU_FAIL(w, self, "bad warp mask",
                     "lanes name each other with different masks: lane " +
                         std::to_string(self->linear % 32) + " (" + threadName(*self) +
                         ") calls " + self->opName + " at " + formatSite(self->site) +
                         " with mask " + fmtMask(self->mask) + ", while lane " +
                         std::to_string(o.linear % 32) + " waits at " + o.opName + " at " +
                         formatSite(o.site) + " with mask " + fmtMask(o.mask) +
                         "; all lanes of one warp operation must pass the same mask",
                     int(warp));
}

// The calling lane (fields filled in) arrives at a warp operation; returns when the
// operation has completed for it.
void warpArrive(Worker& w, Thread* self) {
    const unsigned warp = self->linear / 32, lane = self->linear % 32, bit = 1u << lane;
    const unsigned mask = self->mask;
    Warp& W = w.warps[warp];
    self->state = State::AtWarp;
    if (W.waiting == 0) {
        W.commonMask = mask;
        W.mixed = false;
    } else if (W.mixed || W.commonMask != mask) {
        W.mixed = true;
        for (unsigned m = W.waiting & mask; m; m &= m - 1) {
            const Thread& o = laneThread(w, warp, unsigned(__builtin_ctz(m)));
            if (o.mask != mask && (o.mask & bit)) maskMismatch(w, self, o);
        }
    }
    W.waiting |= bit;
    if ((W.waiting & mask) == mask) {
        bool same = true;
        if (W.mixed) {
            for (unsigned m = mask; m; m &= m - 1) {
                if (laneThread(w, warp, unsigned(__builtin_ctz(m))).mask != mask) same = false;
            }
        }
        if (same) completeWarpOp(w, self, W, warp, mask);
    }
    switchFrom(w, self);
}

}  // namespace

// ---- the device-side entry points of warp operations (cuda_emu.h) ----

void syncwarp(Site site, unsigned mask) {
    site.pc = __builtin_return_address(0);
    Worker& w = inKernel("__syncwarp()", site);
    Thread* self = w.current;
    checkMask(w, self, mask, site, "__syncwarp");
    self->kind = WarpKind::Sync;
    self->opName = "__syncwarp";
    self->site = site;
    self->mask = mask;
    warpArrive(w, self);
}

unsigned long long shuffle(Site site, ShflMode mode, unsigned mask, unsigned long long bits,
                           int srcArg, int width) {
    site.pc = __builtin_return_address(0);
    const char* op = shuffleName(mode);
    Worker& w = inKernel(op, site);
    Thread* self = w.current;
    checkMask(w, self, mask, site, op);
    const int lane = int(self->linear % 32);
    if (__builtin_expect(width < 1 || width > 32 || (width & (width - 1)) != 0, 0)) {
        badShuffle(w, self, site, op, mask, -1, width);
    }
    // PTX shfl.sync semantics: segments of `width` lanes; out of the segment -> own.
    const int segMask = 32 - width;  // the lane bits that select the segment
    const int b = srcArg & 31;
    const int minLane = lane & segMask;
    const int maxLane = minLane | (width - 1);
    int j = lane;
    switch (mode) {
        case ShflMode::Idx: j = minLane | (srcArg & (width - 1)); break;
        case ShflMode::Up: j = lane - b >= minLane ? lane - b : lane; break;
        case ShflMode::Down: j = lane + b <= maxLane ? lane + b : lane; break;
        case ShflMode::Xor: j = (lane ^ b) <= maxLane ? lane ^ b : lane; break;
    }
    if (__builtin_expect(!(mask >> j & 1), 0)) badShuffle(w, self, site, op, mask, j, width);
    self->kind = WarpKind::Shuffle;
    self->opName = op;
    self->site = site;
    self->mask = mask;
    self->src = j;
    self->value = bits;
    warpArrive(w, self);
    return self->result;
}

unsigned vote(Site site, VoteMode mode, unsigned mask, bool predicate) {
    site.pc = __builtin_return_address(0);
    const char* op = voteName(mode);
    Worker& w = inKernel(op, site);
    Thread* self = w.current;
    checkMask(w, self, mask, site, op);
    self->kind = WarpKind::Vote;
    self->voteMode = mode;
    self->opName = op;
    self->site = site;
    self->mask = mask;
    self->predicate = predicate ? 1 : 0;
    warpArrive(w, self);
    return static_cast<unsigned>(self->result);
}

// __activemask(): on a GPU, the lanes that execute the call together. A converged warp
// answers every lane that has not exited; after a branch, only the lanes on the caller's
// side. Here the calling lane parks until no thread of the block can run without it
// (each other lane has exited, waits at a barrier or warp operation, or parked here too),
// or until a lane spins (atomics, fences); then each parked lane gets the lanes of its
// warp parked with it. Lanes of a warp parked at different __activemask() calls get one
// answer (the emulator does not know the call's site).
void releaseActiveMask(Worker& w) {
    for (unsigned warp = 0; warp < w.warps.size(); ++warp) {
        Warp& W = w.warps[warp];
        const unsigned parked = W.atActiveMask;
        W.atActiveMask = 0;
        for (unsigned m = parked; m; m &= m - 1) {
            Thread& t = laneThread(w, warp, unsigned(__builtin_ctz(m)));
            t.result = parked;
            makeRunnable(w, t);
        }
    }
    w.parkedAtActiveMask = 0;
}

unsigned activeMask() {
    Worker& w = inKernel("__activemask()", Site{"?", 0});
    Thread* self = w.current;
    self->state = State::AtActiveMask;
    self->opName = "__activemask()";
    w.warps[self->linear / 32].atActiveMask |= 1u << (self->linear % 32);
    ++w.parkedAtActiveMask;
    switchFrom(w, self);
    return static_cast<unsigned>(self->result);
}

}  // namespace scanlab::emu::detail
