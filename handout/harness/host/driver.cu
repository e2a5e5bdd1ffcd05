// scanlab harness: students, do not edit (your code goes in student/); maintainers edit it here.
//
// The one driver program that students, tests and the grader all use:
//   scanlab run     run a task on generated input, check it, optionally time it
//   scanlab verify  check an output file written by `run --output` (no GPU needed)
//   scanlab test    the correctness suite: every task x operator x size x block size
//   scanlab grade   the grader's visible cases, and the points its rubric gives them
//   scanlab info    the device, and its measured copy bandwidth
//   scanlab list    what the assignment defines (tasks, operators, suite sizes, ...),
//                   one per line, for scripts
// `scanlab help` prints the options. Every failure prints the seed and the exact
// command that reproduces it. --json writes the same results machine-readably.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "apps/apps.h"
#include "harness/check.h"
#include "harness/generated/assignment.h"
#include "harness/generated/grading.h"
#include "harness/generated/operators.cuh"
#include "harness/generated/suite.h"
#include "harness/host/args.h"
#include "harness/host/generate.h"
#include "harness/host/json.h"
#include "harness/host/grade.h"
#include "harness/host/profile.h"
#include "harness/host/report.h"
#include "harness/host/run.h"
#include "harness/host/sweep.h"
#include "harness/host/test_suite.h"
#include "harness/host/tasks.h"
#include "harness/host/unit_entry.h"
#include "harness/host/verify.h"
#include "harness/runtime.cuh"

namespace scanlab {
namespace {

// The choices below (@TASKS@, ...) are filled in from harness/generated/assignment.h.
const char* const kUsageText = R"(usage: scanlab <command> [options]

commands:
  run      run one task on generated input, check it against the CPU reference,
           and with --time measure it
  verify   check an output file written by `run --output` against the CPU
           reference (on the CPU unless --on-device)
  test     the correctness suite: every task x operator x size x block size
  grade    the grader's visible cases and the points the rubric gives them (an
           estimate of the grade); on a GPU also performance points, estimated
           against the reference's time on the grading GPU
  info     describe the device and measure its copy bandwidth
  batch    many runs in one process (for the grader): --cases FILE holds the
           options of one `run` per line, --json FILE gets one line per case;
           --mark-cases launches an empty kernel before each (for Nsight Compute)
  app A    an application on your kernels (pi, normal-cdf, compaction,
           radix-sort, or all: the default), checked on the CPU; --n, --block, --seed, --output,
           --json (apps/apps.h)
  verify-app A --output FILE --n N
           check an output file written by `app A --output` (CPU only)
  sweep    time one task at every power of two from --min-n (2^10) to --max-n
           (2^28; on the emulator the suite's emulator-max-n, in elements/s,
           not GPU performance):
           your kernels (named --label, default "yours"), its baselines and a
           device copy; --csv FILE, --json FILE (what `make plot` draws)
  list W   what the assignment defines, one per line: tasks, operators
           (--task T: those used with T), distributions, student-files,
           timed-tasks (driver task, operator and file the grader times), sizes,
           large-sizes, blocks, emulator-max-n, exit-codes, applications
           (with the task each uses and its exercise's file, or -) (scripts use it)
  help     this text

run / verify options:
  --task T      @TASKS@ (required)
  --op O        @OPS@ (default @OP@)
  --n N         number of elements, >= 1; 2^20, 3*2^20, 2^24+43 and 1e6
                forms work                                      (default 2^20)
  --block B     threads per block: a multiple of @WARP@ in [@MINB@, @MAXB@] (default @BLOCK@)
  --seed S      input seed                                         (default 1)
  --dist D      @DISTS@ (default random)
  --json FILE   also write the results as JSON ('-': standard output)
run only:
  --time        time the task with CUDA events: warm-up, repetitions, median;
                each repetition gets an input of its own (see verify --rep) and
                is checked on the GPU after it (a wrong one fails the timing);
                --output gets the last repetition's output
  --warmup W    untimed runs first (default @WARMUP@)      --reps R  timed runs (default @REPS@)
  --baselines   with --time: also time the task's baselines and print speedups
  --no-check    skip the CPU check (timing only)
  --serve       with --time and --json FILE (for the grader): time a round each
                time a line "time" comes on standard input, until "end"; FILE.ready
                says it is set up, FILE.1, FILE.2, ... hold the rounds
  --output FILE write the output elements (raw bytes) to FILE
  --predict-n LIST  profile build (make profile): the sizes to estimate the GPU's
                time at, comma-separated; writeup (2^24, the write-up's tables)
                and graded (the size the grader times) by default
  --schedule-seed S  emulator: this run's thread-schedule seed, as
                SCANLAB_EMU_SEED=S would set it (a batch's lines use it)
  --output FILE the file to check (required)
  --rep R       check it against the input that repetition R (from 0, warm-ups
                and earlier rounds counted) of `run --time` saw
  --cases FILE  instead: many verifies (for the grader), the options of one a
                line; --json FILE gets one line per case, with "case"
  --on-device   on a GPU: check a fold's or a scan's output of an exact
                operator (integers, MSSP) there, against the input drawn there
                again (the same verdict; the CPU checks floats and the rest)
test options:
  --tasks LIST --ops LIST --blocks LIST   comma-separated subsets
  --max-n N     leave out sizes above N (emulator default: the suite's
                emulator_max_n, so the CPU finishes in minutes)
  --large       add the large sizes (up to 2^28) of the suite
  --json FILE   one JSON object per case, one per line
  --junit FILE  a JUnit XML report (one test case per case)
  --isolated    instead: each task that includes another student file, run
                with the harness's version of that file (as the grader runs it
                with the reference's); --student DIR (default .) holds student/
  --all-cases   also every case of a bonus task whose student/ file (--student
                DIR, default .) is still the handout's placeholder (not
                attempted: by default its first case runs, the rest are skipped)
grade options:
  --json FILE   one JSON object per task (cases passed, points), one per line
  --no-perf     on a GPU: do not time the tasks (correctness points only)
  --student DIR where student/ is (make grade-local: .): a file still the
                handout's placeholder gets the grader's 0 (a bonus: not
                attempted), and each task runs again with the harness's version
                of each student file it includes
  --tasks LIST  only these tasks        --no-isolation  not the runs above
  --perf-estimates LIST  on the emulator: TASK=MS,... the profile's estimates at
                the graded size (make grade-local runs make profile's build for
                them): the performance points shown as an estimate
  --refused LIST  files that break a code rule (make grade-local asks
                tools/code_rules.py): their tasks get the grader's 0, not run
  --placeholders LIST  files that call the handout's placeholder (the same):
                their tasks get the grader's 0 (a bonus: not attempted)
  --random N    also N configurations a task drawn at random over every block
                size and size class, as the grader's hidden cases are
                (--random-seed S repeats a draw; --random-max-n the largest n)

exit status: @PASS@ pass, @FAIL@ wrong result, @USAGE@ bad arguments, @NOTIMPL@ task not implemented,
             @ERROR@ CUDA or runtime error, @NOGPU@ no GPU found, @PLACEHOLDER@ the handout's
             placeholder reached in a grading build (harness/baselines.cuh)
)";

std::string joined(const char* const* first, const char* const* last, const char* separator) {
    std::string out;
    for (auto it = first; it != last; ++it) out += (out.empty() ? "" : separator) + std::string(*it);
    return out;
}

std::string usageText() {
    std::vector<const char*> tasks;
    for (const auto& t : kTasks) tasks.push_back(t.name);
    const std::pair<const char*, std::string> fields[] = {
        {"@TASKS@", joined(tasks.data(), tasks.data() + tasks.size(), " | ")},
        {"@OPS@", joined(std::begin(kOperatorNames), std::end(kOperatorNames), " | ")},
        {"@OP@", kOperatorNames[0]},
        {"@DISTS@", joined(std::begin(kDistributionNames), std::end(kDistributionNames), " | ")},
        {"@WARP@", std::to_string(kWarpSize)}, {"@MINB@", std::to_string(kMinBlockSize)},
        {"@MAXB@", std::to_string(kMaxBlockSize)}, {"@BLOCK@", std::to_string(kDefaultBlockSize)},
        {"@PASS@", std::to_string(kExitPass)}, {"@FAIL@", std::to_string(kExitFail)},
        {"@USAGE@", std::to_string(kExitUsage)}, {"@NOTIMPL@", std::to_string(kExitNotImplemented)},
        {"@ERROR@", std::to_string(kExitError)}, {"@NOGPU@", std::to_string(kExitNoGpu)},
        {"@PLACEHOLDER@", std::to_string(kExitPlaceholder)},
        {"@WARMUP@", std::to_string(RunConfig{}.warmup)}, {"@REPS@", std::to_string(RunConfig{}.reps)}};
    std::string text = kUsageText;
    for (const auto& [key, value] : fields)
        for (size_t at; (at = text.find(key)) != std::string::npos;) text.replace(at, std::strlen(key), value);
    return text;
}

// ---- commands ----------------------------------------------------------------

// The rounds of `run --time --serve`: asked for on standard input, a line each ("time";
// "end" or the end of input stops). FILE.ready (set up) and each round's JSON
// (FILE.1, FILE.2, ...) are written whole and renamed into place, so the grader never
// reads half of one.
class StdinRounds final : public Rounds {
  public:
    explicit StdinRounds(std::string jsonPath) : jsonPath_(std::move(jsonPath)) {}
    std::function<std::string(const RunResult&)> describe;  // a round's JSON (runOne sets it)

    bool next() override {
        if (!ready_) {
            publish(jsonPath_ + ".ready", JsonObject().add("status", "ready").str());
            ready_ = true;
        }
        for (std::string line; std::getline(std::cin, line);) {
            if (line == "time") return true;
            if (line == "end") return false;
        }
        return false;
    }
    void done(const RunResult& r) override {
        publish(jsonPath_ + "." + std::to_string(++round_), describe ? describe(r) : "{}");
    }

  private:
    static void publish(const std::string& path, const std::string& text) {
        writeJson(path + ".part", text);
        if (std::rename((path + ".part").c_str(), path.c_str()) != 0)
            throw std::runtime_error("cannot write " + path);
    }
    std::string jsonPath_;
    int round_ = 0;
    bool ready_ = false;
};

// The kernels a case launched, in its JSON line ("kernels") where the program counts
// launches: the unit loader does (harness/host/unit_entry.h), a static build does not.
struct LaunchCount {
    unsigned long before = scanlab_kernel_launches ? scanlab_kernel_launches() : 0;

    JsonObject& addTo(JsonObject& j) const {
        return scanlab_kernel_launches
                   ? j.add("kernels", (unsigned long long)(scanlab_kernel_launches() - before))
                   : j;
    }
};

// Runs one case: prints the result, appends its JSON line to `jsonPath` (if any).
int runOne(const RunConfig& c, const DeviceInfo& dev, const std::string& jsonPath,
           bool appendJson, long caseNumber = -1, StdinRounds* serving = nullptr,
           const std::string& predictN = "graded") {
    std::printf("scanlab run: task %s (task %d), op %s, n %zu, block %u, seed %llu, dist %s "
                "[%s: %s]\n",
                c.task->name, c.task->number, c.op.c_str(), c.n, c.block,
                (unsigned long long)c.seed, c.dist.c_str(), SCANLAB_BACKEND, dev.name.c_str());
    int code = kExitError;
    const LaunchCount launched;
#if !defined(__CUDACC__)
    // The profile build counts what each kernel does (harness/host/profile.h).
    const bool profiled = emu::profilingAvailable() && !c.time;
    emu::setProfiling(profiled);
    (void)emu::takeProfiles();
#endif
    withOperator(c.op, [&](auto op) {
        using Op = decltype(op);
        if (serving)
            serving->describe = [&](const RunResult& round) {
                return resultJson<Op>(c, round).add("device", dev.name).str();
            };
        const RunResult r = runTask<Op>(c);
        printResult<Op>(c, r);
        JsonObject j = resultJson<Op>(c, r).add("device", dev.name);
#if !defined(__CUDACC__)
        if (profiled) {
            const auto profiles = emu::takeProfiles();
            printProfile(profiles);
            // Estimates at the sizes of --predict-n (default: the write-up's and the one the
            // grader times the task at, its rubric task's: scan-exclusive is timed as scan is),
            // whatever n was profiled: from this run and one more at twice its size
            // (harness/host/profile.h).
            const size_t gradedN = gradedPerfN(c.task->number);
            std::vector<size_t> targets;
            for (const std::string& item : splitList(predictN)) {
                const size_t t = item == "graded"    ? (gradedN ? gradedN : c.n)
                                 : item == "writeup" ? kWriteupN
                                                     : size_t(parseCount(item, "--predict-n"));
                if (std::find(targets.begin(), targets.end(), t) == targets.end()) targets.push_back(t);
            }
            std::vector<emu::KernelProfile> second;
            size_t n2 = 0;
            const bool others = std::any_of(targets.begin(), targets.end(), [&](size_t t) { return t != c.n; });
            if (others && r.status == "pass") {
                RunConfig twice = c;
                twice.n = 2 * c.n;
                twice.check = false;
                (void)runTask<Op>(twice);
                second = emu::takeProfiles();
                n2 = twice.n;
            }
            std::string predictions = "[";
            Prediction graded;
            for (const size_t targetN : targets) {
                const char* note = targetN == gradedN ? "the size the grader times"
                                   : targetN == kWriteupN ? "the write-up's size"
                                                          : "--predict-n";
                const Prediction p = printPrediction(profiles, c.n, second, n2,
                                                     double(c.task->bytesMoved * sizeof(typename Op::Element)),
                                                     targetN, note);
                if (targetN == gradedN || graded.n == 0) graded = p;
                JsonObject e;
                e.add("n", (unsigned long long)targetN).add("ms", p.seconds * 1e3).add("gbps", p.gbps)
                    .add("limit", p.limit).add("impossible", p.impossible);
                predictions += (predictions.size() > 1 ? ", " : "") + e.str();
            }
            printPolls(profiles);
            j.raw("profile", profileJson(profiles)).add("predicted_gbps", graded.gbps)
                .add("predicted_ms", graded.seconds * 1e3).add("predicted_limit", graded.limit)
                .add("predicted_impossible", graded.impossible).add("predicted_n", (unsigned long long)graded.n)
                .raw("predictions", predictions + "]");
        }
#endif
        if (caseNumber >= 0) j.add("case", (long long)caseNumber);
        writeJson(jsonPath, launched.addTo(j).str(), appendJson);
        code = exitCodeFor(r);
    });
    std::fflush(stdout);
    return code;
}

bool noGpu(const char* command) {
    if (deviceCount() != 0) return false;
    std::printf("scanlab %s: no CUDA device found; nothing was run. Without a GPU, use the "
                "CPU emulator build (make emu).\n", command);
    return true;
}

int cmdRun(const Args& args) {
    RunConfig c = parseRunConfig(args);
    const std::string jsonPath = args.get("--json", "");
    std::optional<StdinRounds> serving;
    if (args.flag("--serve")) {
        if (!c.time || jsonPath.empty() || jsonPath == "-")
            throw UsageError("--serve needs --time and --json FILE");
        c.rounds = &serving.emplace(jsonPath);
    }
    if (noGpu("run")) return kExitNoGpu;
    return runOne(c, queryDevice(), jsonPath, false, -1, serving ? &*serving : nullptr,
                  args.get("--predict-n", "writeup,graded"));
}

// `batch --mark-cases`: one launch of this empty kernel before each case, so that a
// profiler's list of launches (Nsight Compute's: grader/grading/ncu.py) can be cut into
// the cases, all of them profiled in one process. The grader looks for its name.
__global__ void scanlabCaseMarker(long caseIndex) { (void)caseIndex; }

void markCase(long caseIndex) {
    launchKernel("scanlabCaseMarker", scanlabCaseMarker, dim3(1), dim3(1), 0, caseIndex);
    checkCuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

// `batch --cases FILE --json FILE`: many `run`s in one process (one CUDA context), for
// the grader. Each line of FILE holds the options of one `run`; each case appends one
// JSON line (with "case": its line number, from 0) as soon as it ends. A CUDA error
// may leave the context unusable, so the batch stops there (exit 4): the cases without
// a JSON line were not run. --mark-cases: see markCase.
int cmdBatch(const Args& args) {
    const std::string casesPath = args.get("--cases", "");
    const std::string jsonPath = args.get("--json", "");
    if (casesPath.empty() || jsonPath.empty()) throw UsageError("batch needs --cases FILE and --json FILE");
    const std::vector<RunConfig> cases = readCaseLines(casesPath);
    const bool marked = args.flag("--mark-cases");
    if (noGpu("batch")) return kExitNoGpu;
    const DeviceInfo dev = queryDevice();
    writeJson(jsonPath, "", false);  // truncate
    int worst = kExitPass;
    for (size_t i = 0; i < cases.size(); ++i) {
        if (marked) markCase(long(i));
        const int code = runOne(cases[i], dev, jsonPath, true, long(i));
        if (code == kExitError) return kExitError;
        if (code != kExitPass && worst == kExitPass) worst = code;
    }
    return worst;
}

// `verify --cases FILE --json FILE`: many verifies in one process (for the grader), a
// JSON line each, in FILE's order; exit 0 when every line was written.
int cmdVerify(const Args& args) {
    if (!args.has("--cases")) return verifyOne(parseRunConfig(args), args.get("--json", ""), false, -1, true);
    const std::string jsonPath = args.get("--json", "");
    if (jsonPath.empty() || jsonPath == "-") throw UsageError("verify --cases needs --json FILE");
    std::vector<RunConfig> cases = readCaseLines(args.get("--cases", ""));
    writeJson(jsonPath, "", false);  // truncate
    for (auto& c : cases) c.checkOnDevice = c.checkOnDevice || args.flag("--on-device");
    for (size_t i = 0; i < cases.size(); ++i) verifyOne(cases[i], jsonPath, true, long(i), false);
    return kExitPass;
}

int cmdInfo(const Args& args) {
    if (deviceCount() == 0) {
        std::printf("scanlab info: no CUDA device found\n");
        writeJson(args.get("--json", ""), JsonObject().add("gpu", false).str());
        return kExitNoGpu;
    }
    const DeviceInfo dev = queryDevice();
    const double gbps = measureCopyGbps();
    std::printf("device  %s (compute capability %d.%d, %d SMs, %.1f GiB) [%s]\n"
                "copy    %.1f GB/s (device to device, 256 MiB, bytes read + written)\n",
                dev.name.c_str(), dev.computeMajor, dev.computeMinor, dev.multiprocessors,
                double(dev.globalMemoryBytes) / (1 << 30), SCANLAB_BACKEND, gbps);
    JsonObject j;
    j.add("gpu", true).add("backend", SCANLAB_BACKEND).add("name", dev.name)
        .add("compute_capability", std::to_string(dev.computeMajor) + "." +
                                       std::to_string(dev.computeMinor))
        .add("multiprocessors", dev.multiprocessors)
        .add("global_memory_bytes", (unsigned long long)dev.globalMemoryBytes)
        .add("copy_gbps", gbps);
    writeJson(args.get("--json", ""), j.str());
    return kExitPass;
}

// `list WHAT`: the assignment as this driver was compiled with it, one item per line,
// so that scripts and Makefiles iterate over what the driver knows.
int cmdList(const Args& args) {
    if (args.positional.size() != 1) throw UsageError("list needs one of: tasks, operators, "
                                                      "distributions, student-files, timed-tasks, sizes, "
                                                      "large-sizes, blocks, emulator-max-n, exit-codes");
    const std::string what = args.positional[0];
    if (what == "tasks") {
        for (const auto& t : kTasks) std::printf("%s\n", t.name);
    } else if (what == "operators") {  // --task T: those graded on task T
        const TaskInfo* task = nullptr;
        try {
            if (args.has("--task")) task = &parseTask(args.get("--task", ""));
        } catch (const std::invalid_argument& e) {
            throw UsageError(e.what());
        }
        for (const char* op : kOperatorNames)
            if (!task || operatorApplies(op, task->task)) std::printf("%s\n", op);
    } else if (what == "distributions") {
        for (const char* d : kDistributionNames) std::printf("%s\n", d);
    } else if (what == "student-files") {
        for (const auto& t : kStudentTasks) std::printf("%s\n", t.file);
    } else if (what == "timed-tasks") {  // what the grader times: driver task, operator, file
        for (const grading::Task& t : grading::kTasks)
            for (size_t i = 0; i < t.perfCount; ++i)
                std::printf("%s %s %s\n", t.perf[i].driverTask, t.perf[i].op, t.file);
    } else if (what == "sizes") {
        for (size_t n : kSuiteSizes) std::printf("%zu\n", n);
    } else if (what == "large-sizes") {
        for (size_t n : kSuiteLargeSizes) std::printf("%zu\n", n);
    } else if (what == "blocks") {
        for (unsigned b : kSuiteBlocks) std::printf("%u\n", b);
    } else if (what == "applications") {
        for (const auto& a : apps::kApps)
            std::printf("%s %s %s\n", a.name, taskInfo(a.uses).name,
                        a.exercise ? apps::exercise(a.exercise).file : "-");
    } else if (what == "emulator-max-n") {
        std::printf("%zu\n", kSuiteEmulatorMaxN);
    } else if (what == "exit-codes") {
        for (const auto& e : kExitCodeNames) std::printf("%s %d\n", e.name, e.code);
    } else {
        throw UsageError("list: unknown list '" + what + "'");
    }
    return kExitPass;
}

int dispatch(int argc, char** argv) {
    try {
        if (argc >= 2 && (std::string(argv[1]) == "help" || std::string(argv[1]) == "--help" ||
                          std::string(argv[1]) == "-h")) {
            std::fputs(usageText().c_str(), stdout);
            return kExitPass;
        }
        const Args args = parseArgs(argc, argv);
        if (args.command == "run") return cmdRun(args);
        if (args.command == "verify") return cmdVerify(args);
        if (args.command == "batch") return cmdBatch(args);
        if (args.command == "test") return cmdTest(args);
        if (args.command == "grade") return cmdGrade(args);
        if (args.command == "info") return cmdInfo(args);
        if (args.command == "list") return cmdList(args);
        if (args.command == "app")
            return noGpu("app") ? kExitNoGpu
                                : apps::cmdApp(args, std::string(SCANLAB_BACKEND) == "emulator");
        if (args.command == "verify-app") return apps::cmdVerifyApp(args);
        if (args.command == "sweep") return noGpu("sweep") ? kExitNoGpu : cmdSweep(args, queryDevice());
        throw UsageError("unknown command '" + args.command + "'");
    } catch (const UsageError& e) {
        std::fprintf(stderr, "scanlab: %s\n(run 'scanlab help' for the options)\n", e.what());
        return kExitUsage;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "scanlab: error: %s\n", e.what());
        return kExitError;
    }
}

}  // namespace
}  // namespace scanlab

int main(int argc, char** argv) {
    scanlab::programName() = argv[0];
    const int code = scanlab::dispatch(argc, argv);
    // Ends here, with the reports written: no static destructor or atexit handler (the
    // student's included) runs after the harness, to rewrite what it wrote.
    std::fflush(nullptr);
    std::_Exit(code);
}
