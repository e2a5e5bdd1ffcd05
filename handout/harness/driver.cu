// scanlab harness: DO NOT EDIT. Your code goes in student/.
//
// The one driver program that students, tests and the grader all use:
//   scanlab run     run a task on generated input, check it, optionally time it
//   scanlab verify  check an output file written by `run --output` (no GPU needed)
//   scanlab test    the correctness suite: every task x operator x size x block size
//   scanlab info    the device, and its measured copy bandwidth
// `scanlab help` prints the options. Every failure prints the seed and the exact
// command that reproduces it. --json writes the same results machine-readably.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "harness/check.h"
#include "harness/generate.h"
#include "harness/json.h"
#include "harness/ops.cuh"
#include "harness/run.h"
#include "harness/runtime.cuh"
#include "harness/suite.h"
#include "harness/tasks.h"

namespace scanlab {
namespace {

enum ExitCode { kPass = 0, kFail = 1, kUsage = 2, kNotImplemented = 3, kError = 4, kNoGpu = 77 };

const char* const kUsageText = R"(usage: scanlab <command> [options]

commands:
  run      run one task on generated input, check it against the CPU reference,
           and with --time measure it
  verify   check an output file written by `run --output` against the CPU
           reference (runs on the CPU only)
  test     the correctness suite: every task x operator x size x block size
  info     describe the device and measure its copy bandwidth
  batch    many runs in one process (for the grader): --cases FILE holds the
           options of one `run` per line, --json FILE gets one line per case
  help     this text

run / verify options:
  --task T      warp-scan | reduce | scan | scan-exclusive          (required)
  --op O        add-i32 | add-f32 | max-i32 | mssp             (default add-i32)
  --n N         number of elements, >= 1; 2^k and 1e6 forms work (default 2^20)
  --block B     threads per block: a multiple of 32 in [32, 1024]  (default 256)
  --seed S      input seed                                         (default 1)
  --dist D      random | ones | ascending | descending          (default random)
  --json FILE   also write the results as JSON ('-': standard output)
run only:
  --time        time the task with CUDA events: warm-up, repetitions, median
  --warmup W    untimed runs first (default 3)      --reps R  timed runs (default 20)
  --baselines   with --time: also time the task's baselines and print speedups
  --no-check    skip the CPU check (timing only)
  --output FILE write the output elements (raw bytes) to FILE
verify only:
  --output FILE the file to check (required)
test options:
  --tasks LIST --ops LIST --blocks LIST   comma-separated subsets
  --max-n N     leave out sizes above N (emulator default: the suite's
                emulator_max_n, so the CPU finishes in minutes)
  --large       add the large sizes (up to 2^28) of the suite
  --json FILE   one JSON object per case, one per line
  --junit FILE  a JUnit XML report (one test case per case)

exit status: 0 pass, 1 wrong result, 2 bad arguments, 3 task not implemented,
             4 CUDA or runtime error, 77 no GPU found
)";

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// ---- command-line parsing --------------------------------------------------

struct Args {
    std::string command;
    std::map<std::string, std::string> values;
    std::vector<std::string> flags;

    bool flag(const std::string& name) const {
        return std::find(flags.begin(), flags.end(), name) != flags.end();
    }
    std::string get(const std::string& name, const std::string& fallback) const {
        auto it = values.find(name);
        return it == values.end() ? fallback : it->second;
    }
};

const char* const kValueOptions[] = {"--task", "--op", "--n", "--block", "--seed", "--dist",
                                     "--json", "--warmup", "--reps", "--output", "--tasks",
                                     "--ops", "--blocks", "--max-n", "--junit", "--cases"};
const char* const kFlagOptions[] = {"--time", "--baselines", "--no-check", "--large"};

Args parseArgs(int argc, char** argv) {
    Args args;
    if (argc < 2) throw UsageError("no command given");
    args.command = argv[1];
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (std::find(std::begin(kFlagOptions), std::end(kFlagOptions), a) !=
            std::end(kFlagOptions)) {
            args.flags.push_back(a);
        } else if (std::find(std::begin(kValueOptions), std::end(kValueOptions), a) !=
                   std::end(kValueOptions)) {
            if (i + 1 >= argc) throw UsageError(a + " needs a value");
            args.values[a] = argv[++i];
        } else {
            throw UsageError("unknown option '" + a + "'");
        }
    }
    return args;
}

// Parses "1000", "2^20", "1e6", "3*2^20" into a count.
unsigned long long parseCount(const std::string& text, const std::string& what) {
    try {
        size_t star = text.find('*');
        if (star != std::string::npos)
            return parseCount(text.substr(0, star), what) * parseCount(text.substr(star + 1), what);
        size_t caret = text.find('^');
        if (caret != std::string::npos) {
            const auto base = std::stoull(text.substr(0, caret));
            const auto exp = std::stoull(text.substr(caret + 1));
            if (exp > 62) throw std::out_of_range("exponent");
            unsigned long long v = 1;
            for (unsigned long long k = 0; k < exp; ++k) v *= base;
            return v;
        }
        size_t used = 0;
        if (text.find_first_of("eE") != std::string::npos) {
            const double v = std::stod(text, &used);
            if (used != text.size() || v < 0 || v != std::floor(v)) throw std::invalid_argument(text);
            return (unsigned long long)v;
        }
        if (!text.empty() && text[0] == '-') throw std::invalid_argument(text);
        const auto v = std::stoull(text, &used);
        if (used != text.size()) throw std::invalid_argument(text);
        return v;
    } catch (const UsageError&) {
        throw;
    } catch (const std::exception&) {
        throw UsageError(what + ": '" + text + "' is not a non-negative whole number");
    }
}

std::vector<std::string> splitList(const std::string& text) {
    std::vector<std::string> items;
    std::stringstream s(text);
    for (std::string item; std::getline(s, item, ',');)
        if (!item.empty()) items.push_back(item);
    return items;
}

void validateBlock(unsigned long long block) {
    if (block < kMinBlockSize || block > kMaxBlockSize || block % kWarpSize != 0)
        throw UsageError("--block " + std::to_string(block) +
                         ": must be a multiple of 32 between 32 and 1024");
}

RunConfig parseRunConfig(const Args& args) {
    RunConfig c;
    if (!args.values.count("--task")) throw UsageError("--task is required");
    try {
        c.task = &parseTask(args.get("--task", ""));
        parseDistribution(args.get("--dist", c.dist));
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    c.op = args.get("--op", c.op);
    if (!withOperator(c.op, [](auto) {}))
        throw UsageError("unknown operator '" + c.op +
                         "' (expected add-i32, add-f32, max-i32 or mssp)");
    c.n = parseCount(args.get("--n", "2^20"), "--n");
    if (c.n < 1) throw UsageError("--n must be at least 1");
    if (c.n > (size_t(1) << 32)) throw UsageError("--n must be at most 2^32");
    const auto block = parseCount(args.get("--block", "256"), "--block");
    validateBlock(block);
    c.block = unsigned(block);
    c.seed = parseCount(args.get("--seed", "1"), "--seed");
    c.dist = args.get("--dist", c.dist);
    c.check = !args.flag("--no-check");
    c.time = args.flag("--time");
    c.baselines = args.flag("--baselines");
    c.warmup = int(parseCount(args.get("--warmup", "3"), "--warmup"));
    c.reps = int(parseCount(args.get("--reps", "20"), "--reps"));
    if (c.reps < 1) throw UsageError("--reps must be at least 1");
    if (c.baselines && !c.time) throw UsageError("--baselines needs --time");
    c.outputFile = args.get("--output", "");
    return c;
}

std::string program = "scanlab";

std::string reproduceCommand(const RunConfig& c) {
    return reproducePrefix() + program + " run --task " + c.task->name + " --op " + c.op + " --n " +
           std::to_string(c.n) + " --block " + std::to_string(c.block) + " --seed " +
           std::to_string(c.seed) + " --dist " + c.dist;
}

// ---- reporting ---------------------------------------------------------------

int exitCodeFor(const RunResult& r) {
    if (r.status == "pass") return kPass;
    if (r.status == "fail") return kFail;
    if (r.status == "not_implemented") return kNotImplemented;
    return kError;
}

JsonObject timingJson(const Timing& t) {
    JsonObject j;
    j.add("name", t.name).add("median_ms", t.medianMs).add("min_ms", t.minMs).add("max_ms", t.maxMs)
        .add("reps", t.reps);
    return j;
}

template <class Op>
JsonObject resultJson(const RunConfig& c, const RunResult& r) {
    using T = typename Op::Element;
    JsonObject j;
    j.add("scanlab", 1).add("backend", SCANLAB_BACKEND).add("task", c.task->name)
        .add("task_number", c.task->number).add("op", c.op).add("n", (unsigned long long)c.n)
        .add("block", c.block).add("seed", (unsigned long long)c.seed).add("dist", c.dist)
        .add("status", r.status).add("message", r.message).add("reproduce", reproduceCommand(c));
    if (r.checked) {
        j.add("mismatches", (unsigned long long)r.check.mismatches);
        if (r.check.first) {
            JsonObject m;
            m.add("index", (unsigned long long)r.check.first->index)
                .add("expected", r.check.first->expected).add("got", r.check.first->got);
            j.add("first_mismatch", m);
        }
    }
    if (!r.hint.empty()) j.add("hint", r.hint);
    if (r.timing) {
        const double bytes = double(c.task->bytesMoved) * sizeof(T) * double(c.n);
        JsonObject t = timingJson(*r.timing);
        t.add("bytes_per_element", int(c.task->bytesMoved * sizeof(T)))
            .add("gbps", bytes / (r.timing->medianMs * 1e6));
        j.add("timing", t);
        std::string list = "[";
        for (const auto& b : r.baselines) {
            JsonObject bj = timingJson(b);
            bj.add("speedup", b.medianMs / r.timing->medianMs);
            list += (list.size() > 1 ? ", " : "") + bj.str();
        }
        j.raw("baselines", list + "]");
    }
    return j;
}

template <class Op>
void printResult(const RunConfig& c, const RunResult& r) {
    using T = typename Op::Element;
    if (r.status == "not_implemented") {
        std::printf("  task %d: not implemented (student/%s still has its TODO stub)\n",
                    c.task->number, c.task->studentFile);
        return;
    }
    if (r.status == "error") {
        std::printf("  ERROR   %s\n  reproduce: %s\n", r.message.c_str(), reproduceCommand(c).c_str());
        return;
    }
    if (r.checked) {
        if (r.check.passed()) {
            const bool one = c.task->task == Task::Reduce || c.n == 1;
            std::printf("  check   PASS (%zu %s the CPU reference)\n", one ? size_t(1) : c.n,
                        one ? "element matches" : "elements match");
        } else {
            const auto& m = *r.check.first;
            std::printf("  check   FAIL: %zu of %zu elements differ; first at index %zu: "
                        "expected %s, got %s\n",
                        r.check.mismatches, c.task->task == Task::Reduce ? size_t(1) : c.n,
                        m.index, m.expected.c_str(), m.got.c_str());
            if (!r.message.empty()) std::printf("  note    %s\n", r.message.c_str());
            if (!r.hint.empty()) std::printf("  hint    %s\n", r.hint.c_str());
            std::printf("  reproduce: %s\n", reproduceCommand(c).c_str());
        }
    } else {
        std::printf("  check   skipped (--no-check)\n");
    }
    if (r.timing) {
        const double bytes = double(c.task->bytesMoved) * sizeof(T) * double(c.n);
        std::printf("  time    median %.4f ms (min %.4f, max %.4f, %d reps)  %.1f GB/s "
                    "(%d B/element)\n",
                    r.timing->medianMs, r.timing->minMs, r.timing->maxMs, r.timing->reps,
                    bytes / (r.timing->medianMs * 1e6), int(c.task->bytesMoved * sizeof(T)));
        for (const auto& b : r.baselines)
            std::printf("  vs %-20s %10.4f ms   speedup %.1fx\n", b.name.c_str(), b.medianMs,
                        b.medianMs / r.timing->medianMs);
    }
}

std::string xmlQuote(const std::string& text) {
    std::string out = "\"";
    for (char ch : text) {
        switch (ch) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += (unsigned char)ch < 0x20 ? ' ' : ch;
        }
    }
    return out + "\"";
}

void writeJson(const std::string& path, const std::string& json, bool append = false) {
    if (path.empty()) return;
    if (path == "-") {
        std::printf("%s\n", json.c_str());
        return;
    }
    std::ofstream f(path, append ? std::ios::app : std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write " + path);
    if (!json.empty()) f << json << "\n";
}

// ---- commands ----------------------------------------------------------------

// Runs one case: prints the result, appends its JSON line to `jsonPath` (if any).
int runOne(const RunConfig& c, const DeviceInfo& dev, const std::string& jsonPath,
           bool appendJson, long caseNumber = -1) {
    std::printf("scanlab run: task %s (task %d), op %s, n %zu, block %u, seed %llu, dist %s "
                "[%s: %s]\n",
                c.task->name, c.task->number, c.op.c_str(), c.n, c.block,
                (unsigned long long)c.seed, c.dist.c_str(), SCANLAB_BACKEND, dev.name.c_str());
    int code = kError;
    withOperator(c.op, [&](auto op) {
        using Op = decltype(op);
        const RunResult r = runTask<Op>(c);
        printResult<Op>(c, r);
        JsonObject j = resultJson<Op>(c, r);
        j.add("device", dev.name);
        if (caseNumber >= 0) j.add("case", (long long)caseNumber);
        writeJson(jsonPath, j.str(), appendJson);
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
    const RunConfig c = parseRunConfig(args);
    if (noGpu("run")) return kNoGpu;
    return runOne(c, queryDevice(), args.get("--json", ""), false);
}

// `batch --cases FILE --json FILE`: many `run`s in one process (one CUDA context), for
// the grader. Each line of FILE holds the options of one `run`; each case appends one
// JSON line (with "case": its line number, from 0) as soon as it ends. A CUDA error
// may leave the context unusable, so the batch stops there (exit 4): the cases without
// a JSON line were not run.
int cmdBatch(const Args& args) {
    const std::string casesPath = args.get("--cases", "");
    const std::string jsonPath = args.get("--json", "");
    if (casesPath.empty() || jsonPath.empty()) throw UsageError("batch needs --cases FILE and --json FILE");
    std::ifstream f(casesPath);
    if (!f) throw UsageError("cannot read " + casesPath);
    std::vector<RunConfig> cases;
    for (std::string line; std::getline(f, line);) {
        std::vector<std::string> words{"scanlab", "run"};
        std::istringstream s(line);
        for (std::string w; s >> w;) words.push_back(w);
        if (words.size() == 2) continue;  // blank line
        std::vector<char*> argv;
        for (auto& w : words) argv.push_back(w.data());
        cases.push_back(parseRunConfig(parseArgs(int(argv.size()), argv.data())));
    }
    if (noGpu("batch")) return kNoGpu;
    const DeviceInfo dev = queryDevice();
    writeJson(jsonPath, "", false);  // truncate
    int worst = kPass;
    for (size_t i = 0; i < cases.size(); ++i) {
        const int code = runOne(cases[i], dev, jsonPath, true, long(i));
        if (code == kError) return kError;
        if (code != kPass && worst == kPass) worst = code;
    }
    return worst;
}

int cmdVerify(const Args& args) {
    RunConfig c = parseRunConfig(args);
    if (c.outputFile.empty()) throw UsageError("verify needs --output FILE");
    int code = kError;
    withOperator(c.op, [&](auto op) {
        using Op = decltype(op);
        using T = typename Op::Element;
        RunResult r;
        try {
            const auto input = generateInput<Op>(c.n, c.seed, parseDistribution(c.dist));
            const auto got = readRaw<T>(c.outputFile, c.task->task == Task::Reduce ? 1 : c.n);
            r.checked = true;
            r.check = checkOutput<Op>(c.task->task, input, got);
            if (!r.check.passed()) r.status = "fail";
        } catch (const std::runtime_error& e) {
            r.status = "error";
            r.message = e.what();
        }
        printResult<Op>(c, r);
        writeJson(args.get("--json", ""), resultJson<Op>(c, r).str());
        code = exitCodeFor(r);
    });
    return code;
}

template <class T>
std::vector<T> pick(const std::vector<T>& all, const std::vector<std::string>& names,
                    std::string (*nameOf)(const T&)) {
    if (names.empty()) return all;
    std::vector<T> out;
    for (const auto& want : names) {
        auto it = std::find_if(all.begin(), all.end(), [&](const T& x) { return nameOf(x) == want; });
        if (it == all.end()) throw UsageError("unknown name '" + want + "' in list");
        out.push_back(*it);
    }
    return out;
}

int cmdTest(const Args& args) {
    if (deviceCount() == 0) {
        std::printf("scanlab test: no CUDA device found: skipped (use the emulator build "
                    "without a GPU)\n");
        return kNoGpu;
    }
    std::vector<const TaskInfo*> tasks;
    for (const auto& name : args.values.count("--tasks") ? splitList(args.get("--tasks", ""))
                                                         : std::vector<std::string>{})
        try {
            tasks.push_back(&parseTask(name));
        } catch (const std::invalid_argument& e) {
            throw UsageError(e.what());
        }
    if (tasks.empty())
        for (const auto& t : kTasks) tasks.push_back(&t);
    std::vector<std::string> ops = splitList(args.get("--ops", ""));
    if (ops.empty()) ops.assign(std::begin(kOperatorNames), std::end(kOperatorNames));
    std::vector<unsigned> blocks;
    for (const auto& b : splitList(args.get("--blocks", ""))) {
        const auto v = parseCount(b, "--blocks");
        validateBlock(v);
        blocks.push_back(unsigned(v));
    }
    if (blocks.empty()) blocks.assign(std::begin(kSuiteBlocks), std::end(kSuiteBlocks));
    // The emulator is slower than a GPU: by default it leaves out the largest sizes.
    const bool emulated = std::string(SCANLAB_BACKEND) == "emulator";
    const size_t maxN = args.values.count("--max-n")
                            ? parseCount(args.get("--max-n", ""), "--max-n")
                            : emulated ? kSuiteEmulatorMaxN : ~size_t(0);
    const std::string jsonPath = args.get("--json", "");
    if (!jsonPath.empty() && jsonPath != "-") writeJson(jsonPath, "", false);  // truncate

    std::vector<RunConfig> cases;
    for (const TaskInfo* task : tasks)
        for (const auto& op : ops) {
            if (!withOperator(op, [](auto) {})) throw UsageError("unknown operator '" + op + "'");
            for (unsigned block : blocks)
                for (size_t n : kSuiteSizes)
                    if (n <= maxN) cases.push_back(suiteCase(*task, op, n, block));
            if (args.flag("--large"))
                for (size_t n : kSuiteLargeSizes)
                    if (n <= maxN) cases.push_back(suiteCase(*task, op, n, 256));
        }

    // A task whose stub is still in place is reported once, not once per case.
    size_t passed = 0, failed = 0, notImplemented = 0;
    std::vector<int> stubbedTasks;
    std::string junitCases;
    for (const RunConfig& c : cases) {
        const std::string caseName = std::string(c.task->name) + " " + c.op + " n=" +
                                     std::to_string(c.n) + " block=" + std::to_string(c.block);
        if (std::find(stubbedTasks.begin(), stubbedTasks.end(), c.task->number) !=
            stubbedTasks.end()) {
            ++notImplemented;
            junitCases += "  <testcase classname=\"scanlab.task" + std::to_string(c.task->number) +
                          "\" name=" + xmlQuote(caseName) +
                          "><failure message=\"not implemented\"/></testcase>\n";
            continue;
        }
        withOperator(c.op, [&](auto op) {
            using Op = decltype(op);
            const RunResult r = runTask<Op>(c);
            std::string failure;
            if (r.status == "pass") {
                ++passed;
            } else if (r.status == "not_implemented") {
                ++notImplemented;
                stubbedTasks.push_back(c.task->number);
                printResult<Op>(c, r);
                failure = r.message;
            } else {
                ++failed;
                std::printf("FAIL %s\n", caseName.c_str());
                printResult<Op>(c, r);
                failure = r.status == "fail" && r.check.first
                              ? "index " + std::to_string(r.check.first->index) + ": expected " +
                                    r.check.first->expected + ", got " + r.check.first->got
                              : r.message;
                failure += " (reproduce: " + reproduceCommand(c) + ")";
            }
            junitCases += "  <testcase classname=\"scanlab.task" + std::to_string(c.task->number) +
                          "\" name=" + xmlQuote(caseName) + ">" +
                          (failure.empty() ? "" : "<failure message=" + xmlQuote(failure) + "/>") +
                          "</testcase>\n";
            if (!jsonPath.empty()) writeJson(jsonPath, resultJson<Op>(c, r).str(), true);
        });
    }
    const std::string junitPath = args.get("--junit", "");
    if (!junitPath.empty()) {
        std::ofstream f(junitPath, std::ios::trunc);
        f << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"scanlab ("
          << SCANLAB_BACKEND << ")\" tests=\"" << cases.size() << "\" failures=\""
          << failed + notImplemented << "\">\n"
          << junitCases << "</testsuite>\n";
        if (!f) throw std::runtime_error("cannot write " + junitPath);
    }
    std::printf("scanlab test [%s]: %zu cases: %zu passed, %zu failed", SCANLAB_BACKEND,
                cases.size(), passed, failed);
    if (notImplemented) std::printf(", %zu not run (task not implemented)", notImplemented);
    std::printf("\n");
    return failed ? kFail : notImplemented ? kNotImplemented : kPass;
}

int cmdInfo(const Args& args) {
    if (deviceCount() == 0) {
        std::printf("scanlab info: no CUDA device found\n");
        writeJson(args.get("--json", ""), JsonObject().add("gpu", false).str());
        return kNoGpu;
    }
    const DeviceInfo dev = queryDevice();
    // Copy bandwidth: the ceiling every memory-bound kernel here is measured against.
    const size_t n = size_t(1) << 26;
    DeviceBuffer<int32_t> a(n), b(n);
    a.fillBytes(1);
    const Timing t = timeGpu("copy", 3, 20, [&] { b.copyFrom(a); }, [] {});
    const double gbps = 2.0 * double(n) * sizeof(int32_t) / (t.medianMs * 1e6);
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
    return kPass;
}

int dispatch(int argc, char** argv) {
    try {
        if (argc >= 2 && (std::string(argv[1]) == "help" || std::string(argv[1]) == "--help" ||
                          std::string(argv[1]) == "-h")) {
            std::fputs(kUsageText, stdout);
            return kPass;
        }
        const Args args = parseArgs(argc, argv);
        if (args.command == "run") return cmdRun(args);
        if (args.command == "verify") return cmdVerify(args);
        if (args.command == "batch") return cmdBatch(args);
        if (args.command == "test") return cmdTest(args);
        if (args.command == "info") return cmdInfo(args);
        throw UsageError("unknown command '" + args.command + "'");
    } catch (const UsageError& e) {
        std::fprintf(stderr, "scanlab: %s\n(run 'scanlab help' for the options)\n", e.what());
        return kUsage;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "scanlab: error: %s\n", e.what());
        return kError;
    }
}

}  // namespace
}  // namespace scanlab

int main(int argc, char** argv) {
    scanlab::program = argv[0];
    const int code = scanlab::dispatch(argc, argv);
    std::fflush(stdout);
    return code;
}
