// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// Running one case: generate the input, run the task's kernels, check the output
// against the CPU reference, and time it against its baselines. The driver
// (driver.cu) and the C++ tests both run cases through runTask.
#pragma once
#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/check.h"
#include "harness/generated/operators.cuh"
#include "harness/generated/task_list.cuh"
#include "harness/host/generate.h"
#include "harness/host/student_api.h"
#include "harness/host/student_state.h"
#include "harness/host/stub_reached.h"
#include "harness/host/tasks.h"
#include "harness/host/timed_check.cuh"
#include "harness/host/timing.h"
#include "harness/runtime.cuh"
#include "harness/tasks/launch.cuh"
#include "harness/tasks/tiling.cuh"
#if !defined(__CUDACC__)
#include "emulator/emu_race.h"
#endif

namespace scanlab {

struct RunResult;

// Where the rounds of a served timed run come from (run --time --serve, driver.cu):
// next() waits for the word to time another round (false: stop); done() hands over
// each round's result. The grader interleaves two such processes, the reference's
// and the submission's, round by round (grader/grading/timing.py), without starting a process
// for each round.
struct Rounds {
    virtual ~Rounds() = default;
    virtual bool next() = 0;
    virtual void done(const RunResult& r) = 0;
};

// One run's parameters, validated.
struct RunConfig {
    const TaskInfo* task = nullptr;
    std::string op = kOperatorNames[0];
    size_t n = size_t(kDefaultN);
    unsigned block = kDefaultBlockSize;
    uint64_t seed = 1;
    std::string dist = "random";
    bool check = true;
    bool time = false;
    bool baselines = false;
    int warmup = 3;
    int reps = 20;
    std::string outputFile;
    std::optional<uint64_t> timedRep;    // verify: the timed repetition whose input to check
    bool checkOnDevice = false;          // verify --on-device: on the GPU where exact (verify.h)
    // The emulator's schedule seed of this case (a batch's line: as SCANLAB_EMU_SEED would
    // set it for a process of its own); unset, the program's.
    std::optional<uint64_t> scheduleSeed;
    Rounds* rounds = nullptr;            // run --time --serve: time once per round it asks for
};

// The CPU emulator's thread order comes from a schedule seed; every case starts from the program's,
// so a failure's command replays it: SCANLAB_EMU_SEED=<seed> SCANLAB_EMU_THREADS=<workers>.
inline std::string reproducePrefix() {
#if defined(__CUDACC__)
    return "";
#else
    return "SCANLAB_EMU_SEED=" + std::to_string(emu::scheduleSeed()) +
           " SCANLAB_EMU_THREADS=" + std::to_string(emu::workerThreads()) + " ";
#endif
}

inline void startCaseSchedule(const std::optional<uint64_t>& caseSeed) {
#if !defined(__CUDACC__)
    static const uint64_t programSeed = emu::scheduleSeed();
    emu::setScheduleSeed(caseSeed.value_or(programSeed));
#else
    (void)caseSeed;
#endif
}

// Before a failed case runs again to tell a race from a plain bug: on the emulator, a
// schedule seed of its own (the same one every time, so the verdict is reproducible);
// returns how to say so in the hint.
inline std::string rerunUnderAnotherSchedule() {
#if defined(__CUDACC__)
    return "";
#else
    const uint64_t other = emu::scheduleSeed() * 0x9e3779b97f4a7c15ull + 0x72657275ull;  // "rerun"
    emu::setScheduleSeed(other);
    return " (a second run under SCANLAB_EMU_SEED=" + std::to_string(other) + " gave another output)";
#endif
}

// A failure that two random schedules repeat (a warp scan racing the same way twice) may
// still be a race: on the emulator, the case runs again with the lanes of each warp in
// lane order (as a warp in lockstep issues them), then with the warps in order. Output
// that changes with the order is a race, and the order that changed it names the barrier
// likely missing. "" when neither changes it (or on a GPU).
template <class T, class Runner>
std::string raceInLockstepOrder(Runner& runner, const std::vector<T>& got) {
#if defined(__CUDACC__)
    (void)runner;
    (void)got;
    return "";
#else
    auto changes = [&](emu::LaneOrder order) {
        emu::setLaneOrder(order);
        const auto again = runner.runOnce();
        emu::setLaneOrder(emu::LaneOrder::Random);
        return std::memcmp(again.data(), got.data(), got.size() * sizeof(T)) != 0;
    };
    if (changes(emu::LaneOrder::LanesInOrder))
        return "the output changes when the lanes of each warp run in lockstep order (lane 0, "
               "1, ..., 31) instead of at random: a race between the lanes of a warp, likely a "
               "missing __syncwarp() between a lane's read of a slot another lane writes and "
               "that write (code that relies on lockstep lanes: not guaranteed since Volta)";
    if (changes(emu::LaneOrder::WarpsInOrder))
        return "the output changes when the warps of each block run in order instead of at "
               "random: a race between the warps of a block, likely a missing __syncthreads() "
               "between one warp's read of shared memory and another warp's write of it";
    return "";
#endif
}

// One case of the suite (data/cases.toml, harness/generated/suite.h); the seed follows from
// the size and block size, so every run of the suite checks the same inputs.
inline RunConfig suiteCase(const TaskInfo& task, const std::string& op, size_t n, unsigned block) {
    RunConfig c;
    c.task = &task;
    c.op = op;
    c.n = n;
    c.block = block;
    c.seed = n * 7919 + block;
    return c;
}

// ---- running and timing ----------------------------------------------------

template <class Op>
struct TaskRunner {
    using T = typename Op::Element;
    const RunConfig& cfg;
    DeviceBuffer<T> in;
    DeviceBuffer<T> out;
    Workspace<Op> ws;

    explicit TaskRunner(const RunConfig& c)
        : cfg(c), in(c.n, "in"), out(outputCount(*c.task, c.n), "out") {}

    // The student's (or reference) kernels for the task, through the student unit.
    void launch() {
        student::launchTask<Op>(cfg.task->task, in.data(), cfg.n, out.data(), cfg.block,
                                ws.forRun(cfg.n, cfg.block));
    }

    // Before every launch, timed or not: every buffer the kernels get besides their
    // input (the block results, task 4's whole tile state, the output) is poisoned, so
    // nothing a launch leaves behind reaches the next one, and a kernel that writes
    // nothing cannot pass with the results of an earlier run; the student unit's
    // variables are as the program loaded them (harness/host/student_state.h).
    void clearScratch() {
        studentState().restore();
        ws.forRun(cfg.n, cfg.block);  // allocates what the launch gets
        ws.blockResults.fillBytes(0xA5);
        ws.tileStateBytes.fillBytes(0xA5);
        out.fillBytes(0xA5);
    }

    // One launch on poisoned scratch; the output stays on the device.
    void runOnDevice() {
        clearScratch();
        launch();
        deviceSynchronize(cfg.task->name);
        checkOverruns();
    }

    std::vector<T> runOnce() {
        runOnDevice();
        return out.download();
    }

    // A write past the end of a buffer fails the case by name, on a GPU too (where
    // it would otherwise go unseen, or corrupt whatever lies behind).
    void checkOverruns() {
        for (std::string what : {in.overrun(), out.overrun(), ws.blockResults.overrun(),
                                 ws.tileStateBytes.overrun()})
            if (!what.empty())
                throw CudaError(std::string(cfg.task->name) + ": the task's kernels wrote " + what);
    }
};

// What a task type's baselines() (harness/tasks/task.cuh) times with: the run's buffers and
// geometry, and time(name, launch) for each baseline in the order the manifest lists
// them (its [[driver_task]]'s `baselines`). A baseline the type times that the manifest
// does not list there, or one it lists that the type neither times nor calls notBuilt,
// is an error: the two cannot drift apart unnoticed.
template <class Op>
class BaselineTimer {
  public:
    using T = typename Op::Element;

    BaselineTimer(TaskRunner<Op>& r, int reps) : r_(r), reps_(reps), listed_(splitNames(r.cfg.task->baselines)) {}

    const T* in() const { return r_.in.data(); }
    T* out() const { return r_.out.data(); }
    size_t n() const { return r_.cfg.n; }
    unsigned block() const { return r_.cfg.block; }
    T* blockResults() const { return r_.ws.blockResults.data(); }  // kMaxBlocks elements
    int reps() const { return reps_; }

    template <class Launch>
    void time(const char* name, Launch&& launch) {
        expect(name);
        timings_.push_back(timeGpu(name, 1, reps_, std::forward<Launch>(launch), [] {}));
    }
    template <class Work>
    void timeOnCpu(const char* name, Work&& work) {
        expect(name);
        timings_.push_back(timeCpu(name, std::min(reps_, 3), std::forward<Work>(work)));
    }
    // A listed baseline this build leaves out (CUB's scan without SCANLAB_CUB_BASELINE).
    void notBuilt(const char* name) { expect(name); }

    std::vector<Timing> finish() {
        if (next_ != listed_.size())
            throw std::logic_error(std::string(r_.cfg.task->name) + ": baseline '" + listed_[next_] +
                                   "' of data/assignment.toml is not timed by the task's type");
        return std::move(timings_);
    }

  private:
    static std::vector<std::string> splitNames(const std::string& list) {
        std::vector<std::string> names;
        for (size_t at = 0; at <= list.size();) {
            const size_t comma = std::min(list.find(',', at), list.size());
            if (comma > at) names.push_back(list.substr(at, comma - at));
            at = comma + 1;
        }
        return names;
    }

    void expect(const char* name) {
        if (next_ >= listed_.size() || listed_[next_] != name)
            throw std::logic_error(std::string(r_.cfg.task->name) + ": the task's type times baseline '" +
                                   name + "' where data/assignment.toml lists " +
                                   (next_ < listed_.size() ? "'" + listed_[next_] + "'" : "no more"));
        ++next_;
    }

    TaskRunner<Op>& r_;
    int reps_;
    std::vector<std::string> listed_;
    size_t next_ = 0;
    std::vector<Timing> timings_;
};

// The baselines each task is compared with: the sequential CPU version (its type's
// reference), then what its type times (the handout's placeholder, the naive
// global-memory kernels of the lecture, CUB).
template <class Op>
std::vector<Timing> timeBaselines(TaskRunner<Op>& r, const std::vector<typename Op::Element>& input) {
    BaselineTimer<Op> b(r, std::max(1, std::min(r.cfg.reps, 5)));
    withTask(r.cfg.task->task, [&](auto type) {
        using Type = decltype(type);
        b.timeOnCpu("cpu-sequential", [&] {
            volatile auto sink = Type::template reference<Op>(input).size();
            (void)sink;
        });
        Type::template baselines<Op>(b);
    });
    return b.finish();
}

struct RunResult {
    std::string status = "pass";  // pass | fail | not_implemented | placeholder | error
    std::string message;
    CheckResult check;
    bool checked = false;
    std::string hint;
    std::optional<Timing> timing;
    std::vector<Timing> baselines;
};

// Raw element files: what `run --output` writes and `verify` reads.
template <class T>
void writeRaw(const std::string& path, const std::vector<T>& data) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write " + path);
    f.write(reinterpret_cast<const char*>(data.data()), std::streamsize(data.size() * sizeof(T)));
    if (!f) throw std::runtime_error("error writing " + path);
}

// A raw file of `count` elements of T, opened at its start; else why not.
template <class T>
std::ifstream openRaw(const std::string& path, size_t count) {
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    if (!f) throw std::runtime_error("cannot read " + path);
    const auto size = size_t(f.tellg());
    if (size != count * sizeof(T))
        throw std::runtime_error(path + " holds " + std::to_string(size) + " bytes; expected " +
                                 std::to_string(count * sizeof(T)) + " (" + std::to_string(count) +
                                 " elements of " + std::to_string(sizeof(T)) + " bytes)");
    f.seekg(0);
    return f;
}

template <class T>
std::vector<T> readRaw(const std::string& path, size_t count) {
    std::ifstream f = openRaw<T>(path, count);
    std::vector<T> data(count);
    f.read(reinterpret_cast<char*>(data.data()), std::streamsize(count * sizeof(T)));
    if (!f) throw std::runtime_error("error reading " + path);
    return data;
}

// A device buffer to or from a raw file. On a GPU through a pinned buffer of 64 MiB at a
// time: an 8 GiB output (n >= 2^31) never needs a host copy of its own, and the copies
// run at the bus's speed, not at pageable memory's.
#if defined(__CUDACC__)
class PinnedChunk {
  public:
    static constexpr size_t kBytes = size_t(64) << 20;
    PinnedChunk() { checkCuda(cudaMallocHost(reinterpret_cast<void**>(&data_), kBytes), "cudaMallocHost"); }
    PinnedChunk(const PinnedChunk&) = delete;
    PinnedChunk& operator=(const PinnedChunk&) = delete;
    ~PinnedChunk() { (void)cudaFreeHost(data_); }
    char* data() const { return data_; }

  private:
    char* data_ = nullptr;
};
#endif

template <class T>
void writeRaw(const std::string& path, const DeviceBuffer<T>& buffer) {
#if defined(__CUDACC__)
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write " + path);
    PinnedChunk chunk;
    const char* from = reinterpret_cast<const char*>(buffer.data());
    for (size_t at = 0; at < buffer.bytes(); at += PinnedChunk::kBytes) {
        const size_t bytes = std::min(PinnedChunk::kBytes, buffer.bytes() - at);
        checkCuda(cudaMemcpy(chunk.data(), from + at, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy device to host");
        f.write(chunk.data(), std::streamsize(bytes));
        if (!f) throw std::runtime_error("error writing " + path);
    }
#else
    writeRaw(path, buffer.download());
#endif
}

template <class T>
void readRaw(const std::string& path, DeviceBuffer<T>& buffer) {
#if defined(__CUDACC__)
    std::ifstream f = openRaw<T>(path, buffer.size());
    PinnedChunk chunk;
    char* to = reinterpret_cast<char*>(buffer.data());
    for (size_t at = 0; at < buffer.bytes(); at += PinnedChunk::kBytes) {
        const size_t bytes = std::min(PinnedChunk::kBytes, buffer.bytes() - at);
        f.read(chunk.data(), std::streamsize(bytes));
        if (!f) throw std::runtime_error("error reading " + path);
        checkCuda(cudaMemcpy(to + at, chunk.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy host to device");
    }
#else
    buffer.upload(readRaw<T>(path, buffer.size()));
#endif
}

// A wrong output's hint costs up to three more runs of the task (wrongOutputHint), each as
// long as the case; a build whose every case is wrong spent most of its grade on them (a
// batch of 159 scan cases, 79 wrong: 30.7 s, 5.8 s with this limit), and a report details
// only a task's first failures. So the first kHintedWrongOutputs wrong outputs of each task
// in one process get a hint (a batch runs the visible cases first); the rest get none.
inline constexpr int kHintedWrongOutputs = 5;

inline bool hintBudgetLeft(const TaskInfo& task) {
    static std::map<int, int> given;  // by task number; the driver runs one case at a time
    return given[task.number]++ < kHintedWrongOutputs;
}

// After a wrong output, why it may be wrong: run again (on the emulator under another thread
// schedule, watching shared memory: the first race, emulator/emu_race.h, with both threads,
// both lines and the barrier likely missing); output that changes between runs on the same
// input is a race; else the lockstep-order hint (raceInLockstepOrder).
template <class Op>
std::string wrongOutputHint(const RunConfig& c, TaskRunner<Op>& runner, const std::vector<typename Op::Element>& got) {
    using T = typename Op::Element;
    const std::string other = rerunUnderAnotherSchedule();
#if defined(__CUDACC__)
    const auto again = runner.runOnce();
    const std::string race;
#else
    emu::clearRaces();
    const auto again = [&] {
        const emu::RaceCheckScope watch;
        return runner.runOnce();
    }();
    const std::string race = emu::firstRace();
#endif
    startCaseSchedule(c.scheduleSeed);  // the case's own seed again, for its reproduce command
    std::string hint;
    if (std::memcmp(again.data(), got.data(), got.size() * sizeof(T)) != 0)
        hint = "the output changes from run to run on the same input" + other +
               ": a race, between the threads of a block (a missing "
               "__syncthreads() or __syncwarp()?) or between blocks (one reading "
               "what another block of the same launch writes: blocks run in any "
               "order)";
    else
        hint = raceInLockstepOrder<T>(runner, got);
    startCaseSchedule(c.scheduleSeed);
    if (race.empty()) return hint;
    return hint.empty() ? race : race + "; " + hint;
}

// The timed loop. Every repetition, warm-ups included and counted on across rounds, gets an
// input of its own drawn on the device and poisoned scratch (untimed); after it, with the
// device synchronized, the harness checks on the device that the input is unchanged and the
// output is that input's (harness/host/timed_check.cuh). One wrong repetition fails the
// timing. `verify --rep R` names one.
template <class Op>
class TimedRounds {
  public:
    TimedRounds(const RunConfig& c, TaskRunner<Op>& runner)
        : c_(c), runner_(runner), checker_(c.task->task, c.n, parseDistribution(c.dist)) {}

    uint64_t repetitions() const { return nextRep_; }

    // One round, `warmup` untimed and `reps` timed repetitions: their median, min and max
    // into r.timing; false at a wrong repetition (r says which, and its timing is gone).
    bool timeRound(RunResult& r) {
        ++round_;
        EventTimer timer;
        std::vector<double> ms;
        double checkMs = 0;
        const uint64_t first = nextRep_;
        for (int k = 0; k < c_.warmup + c_.reps; ++k) {
            const uint64_t rep = nextRep_++;
            const uint64_t seed = timedInputSeed(c_.seed, rep);
            std::string wrong;
            const double t = timeRepetition(timer, seed, checkMs, wrong);
            if (!wrong.empty()) {
                failRepetition(r, rep, k, seed, wrong);
                return false;
            }
            if (k >= c_.warmup) ms.push_back(t);
        }
        r.timing = Timing{c_.task->name, median(ms), *std::min_element(ms.begin(), ms.end()),
                          *std::max_element(ms.begin(), ms.end()), c_.reps,
                          c_.warmup + c_.reps, checkMs,
                          Repetitions{first, nextRep_ - 1, c_.warmup, c_.reps}};
        return true;
    }

  private:
    // One repetition: its input drawn and checked around the timed launch (the checks'
    // time into checkMs); the launch's ms, and what is wrong with it ("" if nothing).
    double timeRepetition(EventTimer& timer, uint64_t seed, double& checkMs, std::string& wrong) {
        using Clock = std::chrono::steady_clock;
        auto t0 = Clock::now();
        checker_.generate(runner_.in.data(), seed);
        runner_.clearScratch();
        deviceSynchronize("the input of a timed repetition");
        checkMs += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        const double t = timeLaunch(timer, c_.task->name, [&] { runner_.launch(); });
        t0 = Clock::now();
        runner_.checkOverruns();
        wrong = checker_.check(runner_.in.data(), runner_.out.data(), seed);
        checkMs += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        return t;
    }

    void failRepetition(RunResult& r, uint64_t rep, int k, uint64_t seed, const std::string& wrong) const {
        r.status = "fail";
        r.timing.reset();
        r.message = "timed repetition " + std::to_string(rep) + " (" +
                    (k < c_.warmup ? "warm-up " + std::to_string(k + 1) + " of " + std::to_string(c_.warmup)
                                   : "timed run " + std::to_string(k - c_.warmup + 1) + " of " +
                                         std::to_string(c_.reps)) +
                    ", round " + std::to_string(round_) + ") is wrong: " + wrong +
                    "; not timed (its input: --seed " + std::to_string(seed) + ")";
    }

    const RunConfig& c_;
    TaskRunner<Op>& runner_;
    timed::RepetitionCheck<Op> checker_;
    uint64_t nextRep_ = 0;
    int round_ = 0;
};

// A checked case timed: its rounds (served: as many as asked for; else one), then the last
// repetition's output to --output, and the baselines after a good timing.
template <class Op>
void timeTask(const RunConfig& c, TaskRunner<Op>& runner, const std::vector<typename Op::Element>& input,
              RunResult& r) {
    TimedRounds<Op> rounds(c, runner);
    if (c.rounds) {
        bool ok = true;
        while (c.rounds->next()) {
            if (ok) ok = rounds.timeRound(r);  // after a wrong one, every round says so
            c.rounds->done(r);
        }
        if (rounds.repetitions() == 0) return;  // asked for no round: nothing timed, nothing written
    } else {
        rounds.timeRound(r);
    }
    if (!c.outputFile.empty()) writeRaw(c.outputFile, runner.out);
    if (r.timing && c.baselines) {
        runner.in.upload(input);  // the baselines' input
        r.baselines = timeBaselines<Op>(runner, input);
    }
}

// A run that checks nothing itself and writes its output to a file (the grader's: its
// trusted `verify` checks that file) draws its input on the GPU, where it is used: no host
// copy of n elements to draw and upload (at n >= 2^31, 8 GiB and seconds). So does a timed
// run without baselines, on either backend: each timed repetition draws an input of its
// own on the device, and the first, untimed run needs no host copy either (a timed
// process's set-up at 2^26: 256 MB drawn on one core, uploaded and downloaded, saved). Any
// other run launches the student's kernels only (what Nsight Compute profiles: `run
// --no-check` without --output). The emulator draws the others on the host, which is
// faster there.
#if defined(__CUDACC__)
inline constexpr bool kDrawsUncheckedInputOnDevice = true;
#else
inline constexpr bool kDrawsUncheckedInputOnDevice = false;
#endif

inline bool drawsInputOnDevice(const RunConfig& c) {
    if (c.check) return false;
    if (c.time) return !c.baselines;
    return kDrawsUncheckedInputOnDevice && !c.outputFile.empty();
}

template <class Op>
RunResult runUnchecked(const RunConfig& c) {
    RunResult r;
    startCaseSchedule(c.scheduleSeed);
    try {
        TaskRunner<Op> runner(c);
        timed::generateOnDevice<Op>(runner.in.data(), c.n, c.seed, parseDistribution(c.dist));
        student::resetNotImplemented();
        runner.runOnDevice();
        if (reachedHandoutStub(c.task->number, r.status, r.message)) return r;
        if (c.time) timeTask<Op>(c, runner, {}, r);  // no baselines: drawsInputOnDevice
        else if (!c.outputFile.empty()) writeRaw(c.outputFile, runner.out);
    } catch (const CudaError& e) {
        r.status = "error";
        r.message = e.what();
    }
    return r;
}

template <class Op>
RunResult runTask(const RunConfig& c) {
    if (drawsInputOnDevice(c)) return runUnchecked<Op>(c);
    RunResult r;
    const auto input = generateInput<Op>(c.n, c.seed, parseDistribution(c.dist));
    startCaseSchedule(c.scheduleSeed);
    try {
        TaskRunner<Op> runner(c);
        runner.in.upload(input);
        student::resetNotImplemented();
        auto got = runner.runOnce();
        if (reachedHandoutStub(c.task->number, r.status, r.message)) return r;
        if (c.check) {
            r.checked = true;
            r.check = checkOutput<Op>(c.task->task, input, got);
            if (!r.check.passed()) {
                r.status = "fail";
                if (hintBudgetLeft(*c.task)) r.hint = wrongOutputHint<Op>(c, runner, got);
            }
        }
        const bool timed = c.time && r.status == "pass";
        if (!c.outputFile.empty() && !timed) writeRaw(c.outputFile, got);
        if (timed) timeTask<Op>(c, runner, input, r);
    } catch (const CudaError& e) {
        r.status = "error";
        r.message = e.what();
    }
    return r;
}

}  // namespace scanlab
