// scanlab harness: DO NOT EDIT. Your code goes in student/.
//
// Running one case: generate the input, run the task's kernels, check the output
// against the CPU reference, and time it against its baselines. The driver
// (driver.cu) and the C++ tests both run cases through runTask.
#pragma once
#include <algorithm>
#include <cstring>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/baselines.cuh"
#include "harness/check.h"
#if defined(SCANLAB_CUB_BASELINE)
#include "harness/cub_baseline.h"
#endif
#include "harness/generate.h"
#include "harness/launch.cuh"
#include "harness/operators.cuh"
#include "harness/runtime.cuh"
#include "harness/student_api.h"
#include "harness/tasks.h"
#include "harness/tiling.cuh"
#include "harness/timed_check.cuh"
#include "harness/timing.h"

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
    Rounds* rounds = nullptr;            // run --time --serve: time once per round it asks for
};

// The CPU emulator runs threads in an order drawn from a schedule seed. Every case
// starts from the program's seed, so the command printed with a failure replays the
// same thread order (SCANLAB_EMU_SEED=<seed> in front of it).
inline std::string reproducePrefix() {
#if defined(__CUDACC__)
    return "";
#else
    return "SCANLAB_EMU_SEED=" + std::to_string(emu::scheduleSeed()) + " ";
#endif
}

inline void startCaseSchedule() {
#if !defined(__CUDACC__)
    static const uint64_t programSeed = emu::scheduleSeed();
    emu::setScheduleSeed(programSeed);
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

// One case of the suite (data/cases.toml, harness/suite.h); the seed follows from
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
    // nothing cannot pass with the results of an earlier run.
    void clearScratch() {
        ws.forRun(cfg.n, cfg.block);  // allocates what the launch gets
        ws.blockResults.fillBytes(0xA5);
        ws.tileStateBytes.fillBytes(0xA5);
        out.fillBytes(0xA5);
    }

    std::vector<T> runOnce() {
        clearScratch();
        launch();
        deviceSynchronize(cfg.task->name);
        checkOverruns();
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

// The baselines each task is compared with: the sequential CPU version, the
// handout's placeholder, and the naive global-memory kernels of the lecture.
template <class Op>
std::vector<Timing> timeBaselines(TaskRunner<Op>& r, const std::vector<typename Op::Element>& input) {
    using T = typename Op::Element;
    const RunConfig& c = r.cfg;
    const int reps = std::max(1, std::min(c.reps, 5));
    std::vector<Timing> result;
    result.push_back(timeCpu("cpu-sequential", std::min(reps, 3), [&] {
        volatile auto sink = referenceOutput<Op>(c.task->task, input).size();
        (void)sink;
    }));
    auto noReset = [] {};
    if (c.task->task == Task::WarpScan) {
        result.push_back(timeGpu("placeholder", 1, reps, [&] {
            launchWarpScan<Op, baseline::SequentialWarpScan>("warpScanKernel(placeholder)",
                                                             r.in.data(), c.n, r.out.data(), c.block);
        }, noReset));
    }
    if (c.task->task == Task::Reduce) {
        const TilePlan plan = planTiles<T>(c.n, c.block);
        auto placeholder = [&] {
            // The handout's task 2 placeholder: thread 0 of each block folds its range.
            launchKernel("reduceBlocksSequentialKernel", baseline::reduceBlocksSequentialKernel<Op>, dim3(plan.gridSize),
                         dim3(c.block), 0, static_cast<const T*>(r.in.data()), c.n,
                         plan.itemsPerBlock, r.ws.blockResults.data());
            launchKernel("reduceBlocksSequentialKernel(stage 2)",
                         baseline::reduceBlocksSequentialKernel<Op>, dim3(1),
                         dim3(c.block), 0, static_cast<const T*>(r.ws.blockResults.data()),
                         size_t(plan.gridSize), size_t(plan.gridSize), r.out.data());
        };
        result.push_back(timeGpu("placeholder", 1, reps, placeholder, noReset));
        DeviceBuffer<T> a((c.n + 1) / 2), b((c.n + 3) / 4 + 1);
        auto tree = [&] {
            const T* src = r.in.data();
            size_t m = c.n;
            T* bufs[2] = {a.data(), b.data()};
            for (int level = 0; m > 1; ++level) {
                const size_t half = (m + 1) / 2;
                T* dst = bufs[level % 2];
                launchKernel("treeReduceLevelKernel", baseline::treeReduceLevelKernel<Op>,
                             dim3(unsigned((half + c.block - 1) / c.block)), dim3(c.block), 0,
                             src, m, dst);
                src = dst;
                m = half;
            }
        };
        result.push_back(timeGpu("naive-tree", 1, reps, tree, noReset));
    }
    if (c.task->task == Task::LookbackScan) {
        // The handout's task 4 placeholder: block 0 alone scans everything.
        result.push_back(timeGpu("placeholder", 1, reps, [&] {
            launchKernel("scanInOneBlockKernel", baseline::scanInOneBlockKernel<Op, true>, dim3(1),
                         dim3(c.block), c.block * sizeof(T), static_cast<const T*>(r.in.data()),
                         r.out.data(), c.n);
        }, noReset));
#if defined(SCANLAB_CUB_BASELINE)
        size_t bytes = 0;
        baseline::cubInclusiveScan<Op>(nullptr, bytes, r.in.data(), r.out.data(), c.n);
        DeviceBuffer<unsigned char> temp(bytes ? bytes : 1);
        result.push_back(timeGpu("cub", 1, reps, [&] {
            size_t room = bytes;
            baseline::cubInclusiveScan<Op>(temp.data(), room, r.in.data(), r.out.data(), c.n);
        }, noReset));
#endif
    }
    if (c.task->task == Task::Scan) {
        DeviceBuffer<T> tmp(c.n);
        auto hillisSteele = [&] {
            const T* src = r.in.data();
            T* bufs[2] = {r.out.data(), tmp.data()};
            int step = 0;
            for (size_t h = 1; h < c.n || step == 0; h *= 2, ++step) {
                T* dst = bufs[step % 2];
                launchKernel("hillisSteeleStepKernel", baseline::hillisSteeleStepKernel<Op>,
                             dim3(unsigned((c.n + c.block - 1) / c.block)), dim3(c.block), 0, src,
                             c.n, h, dst);
                src = dst;
            }
        };
        result.push_back(timeGpu("naive-hillis-steele", 1, reps, hillisSteele, noReset));
    }
    return result;
}

struct RunResult {
    std::string status = "pass";  // pass | fail | not_implemented | error
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

template <class T>
std::vector<T> readRaw(const std::string& path, size_t count) {
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    if (!f) throw std::runtime_error("cannot read " + path);
    const auto size = size_t(f.tellg());
    if (size != count * sizeof(T))
        throw std::runtime_error(path + " holds " + std::to_string(size) + " bytes; expected " +
                                 std::to_string(count * sizeof(T)) + " (" + std::to_string(count) +
                                 " elements of " + std::to_string(sizeof(T)) + " bytes)");
    std::vector<T> data(count);
    f.seekg(0);
    f.read(reinterpret_cast<char*>(data.data()), std::streamsize(size));
    return data;
}

template <class Op>
RunResult runTask(const RunConfig& c) {
    using T = typename Op::Element;
    RunResult r;
    const auto input = generateInput<Op>(c.n, c.seed, parseDistribution(c.dist));
    startCaseSchedule();
    try {
        TaskRunner<Op> runner(c);
        runner.in.upload(input);
        student::resetNotImplemented();
        auto got = runner.runOnce();
        if (student::wasNotImplemented()) {
            r.status = "not_implemented";
            r.message = "task " + std::to_string(c.task->number) + ": not implemented";
            return r;
        }
        if (c.check) {
            r.checked = true;
            r.check = checkOutput<Op>(c.task->task, input, got);
            if (!r.check.passed()) {
                r.status = "fail";
                // Run again (on the emulator under another thread schedule): output that
                // changes between runs on the same input is a race.
                const std::string other = rerunUnderAnotherSchedule();
                const auto again = runner.runOnce();
                startCaseSchedule();  // the case's own seed again, for its reproduce command
                if (std::memcmp(again.data(), got.data(), got.size() * sizeof(T)) != 0)
                    r.hint = "the output changes from run to run on the same input" + other +
                             ": a race, between the threads of a block (a missing "
                             "__syncthreads() or __syncwarp()?) or between blocks (one reading "
                             "what another block of the same launch writes: blocks run in any "
                             "order)";
            }
        }
        const bool timed = c.time && r.status == "pass";
        if (!c.outputFile.empty() && !timed) writeRaw(c.outputFile, got);
        if (timed) {
            // Every repetition, warm-ups included and counted on across rounds, gets an
            // input of its own drawn on the device and poisoned scratch (untimed); after
            // it, with the device synchronized, the harness checks on the device that the
            // input is unchanged and the output is that input's (harness/timed_check.cuh).
            // One wrong repetition fails the timing. `verify --rep R` names one.
            timed::RepetitionCheck<Op> checker(c.task->task, c.n, parseDistribution(c.dist));
            uint64_t nextRep = 0;
            int round = 0;
            auto timeRound = [&]() -> bool {
                ++round;
                EventTimer timer;
                std::vector<double> ms;
                double checkMs = 0;
                using Clock = std::chrono::steady_clock;
                for (int k = 0; k < c.warmup + c.reps; ++k) {
                    const uint64_t rep = nextRep++;
                    const uint64_t seed = timedInputSeed(c.seed, rep);
                    auto t0 = Clock::now();
                    checker.generate(runner.in.data(), seed);
                    runner.clearScratch();
                    deviceSynchronize("the input of a timed repetition");
                    checkMs += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
                    const double t = timeLaunch(timer, c.task->name, [&] { runner.launch(); });
                    t0 = Clock::now();
                    runner.checkOverruns();
                    const std::string wrong = checker.check(runner.in.data(), runner.out.data(), seed);
                    checkMs += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
                    if (!wrong.empty()) {
                        r.status = "fail";
                        r.timing.reset();
                        r.message = "timed repetition " + std::to_string(rep) + " (" +
                                    (k < c.warmup ? "warm-up " + std::to_string(k + 1) + " of " +
                                                        std::to_string(c.warmup)
                                                  : "timed run " + std::to_string(k - c.warmup + 1) +
                                                        " of " + std::to_string(c.reps)) +
                                    ", round " + std::to_string(round) + ") is wrong: " + wrong +
                                    "; not timed (its input: --seed " + std::to_string(seed) + ")";
                        return false;
                    }
                    if (k >= c.warmup) ms.push_back(t);
                }
                r.timing = Timing{c.task->name, median(ms), *std::min_element(ms.begin(), ms.end()),
                                  *std::max_element(ms.begin(), ms.end()), c.reps,
                                  c.warmup + c.reps, checkMs};
                return true;
            };
            if (c.rounds) {
                bool ok = true;
                while (c.rounds->next()) {
                    if (ok) ok = timeRound();  // after a wrong one, every round says so
                    c.rounds->done(r);
                }
                if (nextRep == 0) return r;  // asked for no round: nothing timed, nothing written
            } else {
                timeRound();
            }
            if (!c.outputFile.empty()) writeRaw(c.outputFile, runner.out.download());
            if (r.timing && c.baselines) {
                runner.in.upload(input);  // the baselines' input
                r.baselines = timeBaselines<Op>(runner, input);
            }
        }
    } catch (const CudaError& e) {
        r.status = "error";
        r.message = e.what();
    }
    return r;
}

}  // namespace scanlab
