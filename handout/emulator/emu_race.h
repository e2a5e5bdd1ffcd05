// scanlab CPU emulator: the race check of shared memory.
//
// The student unit is compiled with -fsanitize=thread (handout/cmake/scanlab.cmake,
// SCANLAB_EMU_CHECK_FLAGS) and linked WITHOUT ThreadSanitizer's runtime: g++ turns every
// load and store into a call to __tsan_{read,write}N(address), and every __atomic builtin
// into __tsan_atomicN_*, which the emulator defines (emu_race_hooks.cpp). Each access is
// checked for bounds (emu_bounds.h) and, when it lands in shared memory, against the
// word's last write and last readers (emu_race.cpp): two accesses of one word by two
// threads of a block, one of them a write, race unless a __syncthreads() came between
// them or, for two lanes of one warp, a __syncwarp() or another warp operation of that
// warp. Atomics and fences count as a possible synchronization of the whole block (never
// a false race for code that synchronizes through them), so a race across one is missed.
//
// The record costs about as much as the kernel's own work, so it is kept only while asked
// for (setRaceCheck): the harness asks for it in the re-run of a case whose output was wrong
// (harness/host/run.h, wrongOutputHint), and names the first race in the case's hint. A race
// never fails a launch (an output can be right by luck, and the grade goes by the output).
#pragma once
#include "emulator/emu_constinit.h"
#include <cstdint>
#include <string>

namespace scanlab::emu {

// Whether this program's kernels are checked for races (the student unit was built with
// the check's instrumentation).
bool raceCheckActive();
// Watches shared memory in the launches from now on, or not (off at the start of the
// program); returns whether it did.
bool setRaceCheck(bool on);
// Watching for the scope's lifetime, then as before.
struct RaceCheckScope {
    RaceCheckScope() : before(setRaceCheck(true)) {}
    ~RaceCheckScope() { setRaceCheck(before); }
    RaceCheckScope(const RaceCheckScope&) = delete;
    RaceCheckScope& operator=(const RaceCheckScope&) = delete;
    bool before;
};
// The first race found since the last call of clearRaces(), as a sentence naming the
// kernel, both threads, both source lines (the student's, then the harness frame) and
// the barrier likely missing; "" when there was none.
std::string firstRace();
void clearRaces();

}  // namespace scanlab::emu

namespace scanlab::emu::detail {

struct Worker;

// The race check's view of the running block (emu_race.cpp), per worker thread: its
// shared memory, the synchronizations it has passed so far, and the word-level record.
struct RaceRanges {
    uintptr_t tlsLo = 0, tlsSpan = 0;  // the program's static thread-local block (__shared__)
    uintptr_t dynLo = 0, dynSpan = 0;  // the worker's dynamic shared memory
};
extern thread_local SCANLAB_EMU_CONSTINIT RaceRanges tlsRaceRanges;

// Called by the scheduler: a block starts on this worker; all of a block's threads passed
// a __syncthreads(); the lanes of warp `warp` completed a warp operation together.
void raceBlockStart(Worker& w);
void raceBarrier(Worker& w);
void raceWarpSync(Worker& w, unsigned warp);
// An atomic operation or fence by the running thread (emu_race_hooks.cpp).
void raceAtomic();

// A load or store of `bytes` at `address` that may be shared memory.
void raceAccessSlow(uintptr_t address, size_t bytes, bool write, const void* pc);

inline void raceAccess(uintptr_t address, size_t bytes, bool write, const void* pc) {
    const RaceRanges& r = tlsRaceRanges;
    if (address - r.tlsLo < r.tlsSpan || address - r.dynLo < r.dynSpan)
        raceAccessSlow(address, bytes, write, pc);
}

}  // namespace scanlab::emu::detail
