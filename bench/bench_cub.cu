// make bench: the reference warp scan (task 1), reduce, three-phase scan and
// single-pass look-back scan (task 4) against CUB's DeviceReduce::Sum and
// DeviceScan::InclusiveSum and a device-to-device copy, for int32 at 2^20, 2^24 and
// 2^28 elements; then the look-back scan for add-f32 and mssp beside
// cub::DeviceScan::InclusiveScan with the same operator; all measured in this run on
// this GPU.
// `scanlab-bench --tune-lookback`: the look-back scan's tile shapes (threads x items
// per thread), register bounds and look-back waits against CUB at 2^20, 2^24 and 2^28,
// to choose LookbackPolicy (harness/policy.cuh) and lookback_reference::DefaultWait.
// `scanlab-bench --sweep FILE`: CUB's two at every power of two from 2^10 to 2^28,
// as rows of a sweep CSV (harness/host/sweep.h) for `make plot` to draw beside the others
// (CUB's scan in the panels of the three-phase scan and of the look-back scan).
// The newest CUB beside the toolkit's: `make bench` also builds this file against the
// newest CCCL headers from PyPI (scanlab-bench-cccl; bench/cccl_setup.sh fetches them),
// which with `--cub-only FILE` times CUB's contestants alone into FILE; this build with
// `--newest-cub FILE` then prints those rows beside its own (the other CUB ran in its
// own process just before: its ratios cross two runs).
//
// Targets on an H100: reduce >= 0.9x CUB; scan >= 0.6x CUB (the three-phase scan
// moves 3n elements to CUB's 2n, so 0.67x is its bound); look-back scan >= 1.0x CUB
// at 2^24 and 2^28 and >= 0.95x at 2^20 (it moves 2n, as CUB does). The warp scan
// moves 2n too: its bound is the copy.
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/version.cuh>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

// The reference's plans (warpScan, reduce, scan, lookbackScan: harness/tasks/), compiled
// here with the solution's student files, as in a student unit.
#define SCANLAB_STUDENT_UNIT 1
#include "harness/check.h"
#include "harness/host/generate.h"
#include "harness/host/reference.h"
#include "harness/host/sweep.h"
#include "harness/host/timing.h"
#include "harness/runtime.cuh"

using namespace scanlab;
using Op = Add<int32_t>;

namespace {

// One thing timed: what it launches and the bytes a perfect kernel for it moves.
struct Contestant {
    const char* name;
    double bytes;
    std::function<void()> launch;
    std::vector<double> msPerLaunch{};
};

// Rounds alternate the contestants (A B C ... A B C ...), so clock and thermal drift
// touch them all alike. Each sample times `batch` back-to-back launches between two
// events, so at small n the gaps between launches and the event overhead do not
// dominate. Reported per contestant: the median over the rounds, per launch.
void measure(std::vector<Contestant>& cs, int rounds, int batch) {
    EventTimer timer;
    for (auto& c : cs)
        for (int i = 0; i < 3; ++i) c.launch();  // warm-up
    deviceSynchronize("warm-up");
    for (int r = 0; r < rounds; ++r)
        for (auto& c : cs) {
            timer.start();
            for (int i = 0; i < batch; ++i) c.launch();
            c.msPerLaunch.push_back(timer.stop() / batch);
        }
}

double spread(const std::vector<double>& ms) {
    return (*std::max_element(ms.begin(), ms.end()) - *std::min_element(ms.begin(), ms.end())) /
           median(ms);
}

void printRow(const Contestant& c, const Contestant* base) {
    const double ms = median(c.msPerLaunch);
    std::printf("  %-30s %9.4f ms %9.1f GB/s  spread %4.0f%%", c.name, ms,
                c.bytes / (ms * 1e6), 100 * spread(c.msPerLaunch));
    if (base) std::printf("   %5.2fx %s", median(base->msPerLaunch) / ms, base->name);
    std::printf("\n");
}

std::string cubVersion() {
    return std::to_string(CUB_MAJOR_VERSION) + "." + std::to_string(CUB_MINOR_VERSION) + "." +
           std::to_string(CUB_SUBMINOR_VERSION);
}

// The other CUB's times (`--newest-cub FILE`, written by `--cub-only FILE` of the build
// against the newest CCCL), by contestant name and n.
struct OtherCub {
    std::string version;
    std::map<std::pair<std::string, size_t>, double> ms;

    static OtherCub read(const std::string& path) {
        OtherCub o;
        std::ifstream f(path);
        std::string line;
        while (std::getline(f, line)) {
            if (line.rfind("# CUB ", 0) == 0) {
                o.version = line.substr(6);
                continue;
            }
            const size_t a = line.find(','), b = line.rfind(',');
            if (a == std::string::npos || a == b) continue;
            o.ms[{line.substr(0, a), std::stoull(line.substr(a + 1, b - a - 1))}] = std::stod(line.substr(b + 1));
        }
        return o;
    }
    // Its row for `c` (the toolkit CUB's contestant of the same name) at n, if measured.
    void printBeside(const Contestant& c, size_t n) const {
        auto it = ms.find({c.name, n});
        if (it == ms.end()) return;
        std::printf("  %-30s %9.4f ms %9.1f GB/s  (CUB %s, PyPI; own process)   %5.2fx the toolkit's\n",
                    "  the newest CUB", it->second, c.bytes / (it->second * 1e6), version.c_str(),
                    median(c.msPerLaunch) / it->second);
    }
    // How the reference's contestant compares with the newest CUB's `name` at n.
    void printVersus(const Contestant& ours, const char* name, size_t n) const {
        auto it = ms.find({name, n});
        if (it == ms.end()) return;
        std::printf("  %-30s %37s   %5.2fx the newest CUB (%s)\n", "", "", it->second / median(ours.msPerLaunch),
                    version.c_str());
    }
};

// One size's input and output buffers and CUB's scratch space, and CUB's two
// contestants over them.
struct CubCase {
    size_t n;
    std::vector<int32_t> input;
    DeviceBuffer<int32_t> in, out, result;
    size_t reduceTemp = 0, scanTemp = 0;
    DeviceBuffer<unsigned char> temp;

    explicit CubCase(size_t count)
        : n(count), input(generateInput<Op>(n, 7, Distribution::Random)), in(n), out(n), result(1) {
        in.upload(input);
        cub::DeviceReduce::Sum(nullptr, reduceTemp, in.data(), result.data(), int64_t(n));
        cub::DeviceScan::InclusiveSum(nullptr, scanTemp, in.data(), out.data(), int64_t(n));
        temp = DeviceBuffer<unsigned char>(std::max(reduceTemp, scanTemp));
    }
    double elementBytes() const { return sizeof(int32_t) * double(n); }
    Contestant reduce() {
        return {"cub::DeviceReduce::Sum", elementBytes(), [this] {
                    size_t bytes = reduceTemp;
                    cub::DeviceReduce::Sum(temp.data(), bytes, in.data(), result.data(), int64_t(n));
                }};
    }
    Contestant scan() {
        return {"cub::DeviceScan::InclusiveSum", 2 * elementBytes(), [this] {
                    size_t bytes = scanTemp;
                    cub::DeviceScan::InclusiveSum(temp.data(), bytes, in.data(), out.data(), int64_t(n));
                }};
    }
};

// CUB's reduce and scan over n = 2^10 .. 2^28, in the CSV layout of `scanlab sweep`.
int sweepCub(const std::string& path, const DeviceInfo& dev) {
    std::ofstream csv(path, std::ios::trunc);
    if (!csv) {
        std::fprintf(stderr, "scanlab-bench: cannot write %s\n", path.c_str());
        return 2;
    }
    csv << kSweepCsvHeader << "\n";
    for (int log2n = 10; log2n <= 28; ++log2n) {
        const size_t n = size_t(1) << log2n;
        CubCase cub(n);
        std::vector<Contestant> cs{cub.reduce(), cub.scan()};
        measure(cs, 10, std::max(1, int((size_t(1) << 20) / n)));
        // CUB's scan is drawn in the panels of both scans: the three-phase one and the
        // single-pass look-back (task 4), which is CUB's own algorithm.
        const struct { int contestant; const char* task; } rows[] = {
            {0, "reduce"}, {1, "scan"}, {1, "lookback-scan"}};
        for (const auto& row : rows) {
            const Contestant& c = cs[size_t(row.contestant)];
            const double ms = median(c.msPerLaunch);
            char line[256];
            std::snprintf(line, sizeof line, "%s,baseline,cuda,%s,%s,add-i32,256,%zu,pass,%.6f,%.3f,%.6g\n",
                          c.name, dev.name.c_str(), row.task, n, ms, c.bytes / (ms * 1e6),
                          double(n) / (ms * 1e-3));
            csv << line;
        }
        std::printf("n = 2^%d: %s %.1f GB/s, %s %.1f GB/s\n", log2n, cs[0].name,
                    cs[0].bytes / (median(cs[0].msPerLaunch) * 1e6), cs[1].name,
                    cs[1].bytes / (median(cs[1].msPerLaunch) * 1e6));
    }
    return csv ? 0 : 2;
}

// The reference look-back kernel with a tile shape and look-back wait of its own, and
// the plan's launch bounds (at most 32 registers a thread: r32) or none.
template <int kItems, class Wait>
__global__ void __launch_bounds__(1024, LookbackPolicy<int32_t>::kMinBlocksOf1024)
    tuneLookbackKernel32(const int32_t* in, int32_t* out, size_t n, lookback::TileState<int32_t> tiles) {
    lookback_reference::scanTile<Op, kItems, true, Wait>(in, out, n, tiles);
}
template <int kItems, class Wait>
__global__ void tuneLookbackKernel(const int32_t* in, int32_t* out, size_t n,
                                   lookback::TileState<int32_t> tiles) {
    lookback_reference::scanTile<Op, kItems, true, Wait>(in, out, n, tiles);
}

// The plan's launch with that kernel (the plan's own: lookbackItemsPerThread and
// lookback_reference::DefaultWait): what --tune-lookback compares.
template <int kItems, class Wait = lookback_reference::DefaultWait, bool kBounded = true>
Contestant lookbackShape(CubCase& c, Workspace<Op>& ws, unsigned block) {
    static char names[64][96];
    static int used = 0;
    char* name = names[used++ % 64];
    std::snprintf(name, sizeof names[0], "%u x %d%s w%d %u/%u-%u%s%s", block, kItems,
                  kVectorChunks<int32_t, kItems> ? "v" : "", kWarpSize * Wait::kTilesPerLane,
                  Wait::kFirstNs, Wait::kPollNs, Wait::kMaxPollNs,
                  Wait::kSleepFromTiles ? "" : " always", kBounded ? " r32" : "");
    return {name, 2 * c.elementBytes(), [&c, &ws, block] {
                const size_t tileItems = size_t(block) * kItems;
                const unsigned tiles = unsigned((c.n + tileItems - 1) / tileItems);
                lookback::TileState<int32_t> state = ws.forRun(c.n, kWarpSize).tiles;  // the most tiles
                // Cleared as the plan does: the counter, the status and packed words.
                checkCuda(cudaMemsetAsync(state.tileCounter, 0,
                                          size_t(reinterpret_cast<char*>(state.packed + state.tiles) -
                                                 reinterpret_cast<char*>(state.tileCounter))),
                          "cudaMemsetAsync");
                state.tiles = tiles;
                auto kernel = kBounded ? tuneLookbackKernel32<kItems, Wait> : tuneLookbackKernel<kItems, Wait>;
                launchKernel("tuneLookbackKernel", kernel,
                             dim3(tiles), dim3(block), lookbackSharedBytes<int32_t>(block, kItems),
                             static_cast<const int32_t*>(c.in.data()), c.out.data(), c.n, state);
            }};
}

int tuneLookback() {
    bool ok = true;
    std::printf("--tune-lookback: the look-back kernel's tile shapes (threads x items a thread;\n"
                "v: 16-byte loads and stores), look-back windows (w: tiles a warp reads at\n"
                "once), waits (ns before the first read / between reads, doubling up to) and at\n"
                "most 32 registers (r32) against CUB; the plan uses %d x %d at 256 threads\n",
                256, lookbackItemsPerThread<int32_t>(256));
    for (int log2n : {20, 24, 28}) {
        CubCase cub(size_t(1) << log2n);
        Workspace<Op> ws;
        using namespace lookback_reference;
        using Textbook = LookbackWait<1, 0, 32, 32, 0>;  // poll, 32 ns apart, at once
        std::vector<Contestant> cs{cub.scan(),
                                   lookbackShape<8, Textbook, false>(cub, ws, 256),
                                   lookbackShape<12, DefaultWait>(cub, ws, 256),
                                   lookbackShape<20, DefaultWait>(cub, ws, 256),
                                   lookbackShape<20, DefaultWait, false>(cub, ws, 256),
                                   lookbackShape<20, LookbackWait<1, 0, 648, 648>>(cub, ws, 256),
                                   lookbackShape<20, LookbackWait<1, 2000, 648, 648>>(cub, ws, 256),
                                   lookbackShape<20, LookbackWait<1, 4500, 648, 648>>(cub, ws, 256),
                                   lookbackShape<20, LookbackWait<1, 3000, 400, 400>>(cub, ws, 256),
                                   lookbackShape<20, LookbackWait<2, 3000, 648, 648>>(cub, ws, 256),
                                   lookbackShape<28, DefaultWait>(cub, ws, 256),
                                   lookbackShape<28, DefaultWait>(cub, ws, 128),
                                   lookbackShape<20, DefaultWait>(cub, ws, 512)};
        measure(cs, 20, std::max(1, int((size_t(1) << 24) / cub.n)));
        std::printf("\nn = 2^%d\n", log2n);
        printRow(cs[0], nullptr);
        for (size_t i = 1; i < cs.size(); ++i) {
            cs[i].launch();
            const bool right = checkOutput<Op>(Task::LookbackScan, cub.input, cub.out.download()).passed();
            ok = ok && right;
            printRow(cs[i], &cs[0]);
            if (!right) std::printf("    RESULT CHECK FAILED\n");
        }
    }
    return ok ? 0 : 1;
}

// CUB's scan with the operator as a functor: what it does for any operator.
template <class OpT>
struct CubOperator {
    __device__ typename OpT::Element operator()(const typename OpT::Element& a,
                                                const typename OpT::Element& b) const {
        return OpT::apply(a, b);
    }
};

// The look-back scan for another operator beside cub::DeviceScan::InclusiveScan with it.
template <class OpT>
bool benchOperator(const char* opName, size_t n, unsigned block, int rounds, int batch,
                   const OtherCub* other = nullptr, std::FILE* cubOnly = nullptr) {
    using T = typename OpT::Element;
    const std::vector<T> input = generateInput<OpT>(n, 7, Distribution::Random);
    DeviceBuffer<T> in(n), out(n);
    in.upload(input);
    size_t temp = 0;
    cub::DeviceScan::InclusiveScan(nullptr, temp, in.data(), out.data(), CubOperator<OpT>{}, int64_t(n));
    DeviceBuffer<unsigned char> scratch(temp);
    Workspace<OpT> ws;
    const double bytes = 2.0 * sizeof(T) * double(n);
    char cubName[64], ourName[64];
    std::snprintf(cubName, sizeof cubName, "cub InclusiveScan %s", opName);
    std::snprintf(ourName, sizeof ourName, "reference look-back %s", opName);
    std::vector<Contestant> cs;
    cs.push_back({cubName, bytes, [&] {
                      size_t t = temp;
                      cub::DeviceScan::InclusiveScan(scratch.data(), t, in.data(), out.data(),
                                                     CubOperator<OpT>{}, int64_t(n));
                  }});
    if (cubOnly) {  // the newest CUB's build: CUB's row alone, into the file
        measure(cs, rounds, batch);
        std::fprintf(cubOnly, "%s,%zu,%.6f\n", cs[0].name, n, median(cs[0].msPerLaunch));
        printRow(cs[0], nullptr);
        return true;
    }
    cs.push_back({ourName, bytes, [&] {
                      lookbackScan<OpT, true>(in.data(), n, out.data(), block, ws.forRun(n, block).tiles);
                  }});
    measure(cs, rounds, batch);
    lookbackScan<OpT, true>(in.data(), n, out.data(), block, ws.forRun(n, block).tiles);
    const bool right = checkOutput<OpT>(Task::LookbackScan, input, out.download()).passed();
    printRow(cs[0], nullptr);
    if (other) other->printBeside(cs[0], n);
    printRow(cs[1], &cs[0]);
    if (other) other->printVersus(cs[1], cubName, n);
    if (!right) std::printf("    RESULT CHECK FAILED\n");
    return right;
}

// `--cub-only FILE`: CUB's contestants alone (reduce and scan of int32, InclusiveScan of
// add-f32 and mssp) at each size, as `name,n,ms` lines after a `# CUB version` line: what
// the build against the newest CCCL gives the toolkit's build to print (`--newest-cub`).
int cubOnly(const char* path) {
    std::FILE* f = std::fopen(path, "w");
    if (!f) {
        std::fprintf(stderr, "scanlab-bench: cannot write %s\n", path);
        return 1;
    }
    const int rounds = 30;
    std::fprintf(f, "# CUB %s\n", cubVersion().c_str());
    std::printf("scanlab-bench --cub-only: CUB %s alone, median of %d rounds\n", cubVersion().c_str(), rounds);
    for (int log2n : {20, 24, 28}) {
        const size_t n = size_t(1) << log2n;
        const int batch = std::max(1, int((size_t(1) << 24) / n));
        CubCase cub(n);
        std::vector<Contestant> cs{cub.reduce(), cub.scan()};
        measure(cs, rounds, batch);
        std::printf("n = 2^%d\n", log2n);
        for (const auto& c : cs) {
            std::fprintf(f, "%s,%zu,%.6f\n", c.name, n, median(c.msPerLaunch));
            printRow(c, nullptr);
        }
        benchOperator<Add<float>>("add-f32", n, 256, rounds, batch, nullptr, f);
        benchOperator<Mssp>("mssp", n, 256, rounds, batch, nullptr, f);
    }
    std::fclose(f);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (deviceCount() == 0) {
        std::printf("scanlab-bench: no CUDA device found: nothing measured\n");
        return 77;
    }
    if (argc == 3 && std::strcmp(argv[1], "--sweep") == 0) return sweepCub(argv[2], queryDevice());
    if (argc == 2 && std::strcmp(argv[1], "--tune-lookback") == 0) return tuneLookback();
    if (argc == 3 && std::strcmp(argv[1], "--cub-only") == 0) return cubOnly(argv[2]);
    OtherCub other;
    const bool withOther = argc == 3 && std::strcmp(argv[1], "--newest-cub") == 0;
    if (withOther) {
        other = OtherCub::read(argv[2]);
        if (other.ms.empty()) std::printf("scanlab-bench: no rows in %s: the toolkit's CUB only\n", argv[2]);
    }
    const unsigned block = argc == 2 ? unsigned(std::atoi(argv[1])) : 256;
    const int rounds = 30;
    const DeviceInfo dev = queryDevice();
    std::printf("scanlab-bench on %s (cc %d.%d, %d SMs), int32 add, block %u; CUB %s (the toolkit's)%s\n"
                "median of %d interleaved rounds; a round times max(1, 2^24/n) back-to-back "
                "launches of each; spread = (max - min) / median\n",
                dev.name.c_str(), dev.computeMajor, dev.computeMinor, dev.multiprocessors, block,
                cubVersion().c_str(), other.ms.empty() ? "" : (" and CUB " + other.version + " (PyPI)").c_str(),
                rounds);
    bool ok = true;
    for (int log2n : {20, 24, 28}) {
        const size_t n = size_t(1) << log2n;
        const int batch = std::max(1, int((size_t(1) << 24) / n));
        CubCase cub(n);
        const auto& input = cub.input;
        DeviceBuffer<int32_t> copy(n);
        auto &in = cub.in, &out = cub.out, &result = cub.result;
        Workspace<Op> ws;
        const double elem = cub.elementBytes();

        std::vector<Contestant> cs;
        cs.push_back({"device-to-device copy", 2 * elem, [&] { copy.copyFrom(in); }});
        cs.push_back(cub.reduce());
        cs.push_back({"reference reduce", elem, [&] {
            reduce<Op>(in.data(), n, result.data(), block, ws.blockResults.data());
        }});
        cs.push_back(cub.scan());
        cs.push_back({"reference scan (3-phase)", 2 * elem, [&] {
            scan<Op, true>(in.data(), n, out.data(), block, ws.blockResults.data());
        }});
        cs.push_back({"reference look-back scan", 2 * elem, [&] {
            lookbackScan<Op, true>(in.data(), n, out.data(), block, ws.forRun(n, block).tiles);
        }});
        cs.push_back({"reference warp scan (task 1)", 2 * elem, [&] {
            warpScan<Op>(in.data(), n, out.data(), block);
        }});
        measure(cs, rounds, batch);

        // The reference's outputs, from one more untimed launch of each, are checked.
        reduce<Op>(in.data(), n, result.data(), block, ws.blockResults.data());
        const bool reduceOk = result.download()[0] == referenceReduce<Op>(input);
        scan<Op, true>(in.data(), n, out.data(), block, ws.blockResults.data());
        const bool scanOk = checkOutput<Op>(Task::Scan, input, out.download()).passed();
        lookbackScan<Op, true>(in.data(), n, out.data(), block, ws.forRun(n, block).tiles);
        const bool lookbackOk = checkOutput<Op>(Task::LookbackScan, input, out.download()).passed();
        warpScan<Op>(in.data(), n, out.data(), block);
        const bool warpOk = checkOutput<Op>(Task::WarpScan, input, out.download()).passed();
        ok = ok && reduceOk && scanOk && lookbackOk && warpOk;

        std::printf("\nn = 2^%d (%zu elements), %d launch%s per sample%s\n", log2n, n, batch,
                    batch == 1 ? "" : "es",
                    reduceOk && scanOk && lookbackOk && warpOk ? "" : "  RESULT CHECK FAILED");
        const OtherCub* o = other.ms.empty() ? nullptr : &other;
        printRow(cs[0], nullptr);
        printRow(cs[1], nullptr);
        if (o) o->printBeside(cs[1], n);
        printRow(cs[2], &cs[1]);
        if (o) o->printVersus(cs[2], cs[1].name, n);
        printRow(cs[3], nullptr);
        if (o) o->printBeside(cs[3], n);
        printRow(cs[4], &cs[3]);
        if (o) o->printVersus(cs[4], cs[3].name, n);
        printRow(cs[5], &cs[3]);
        if (o) o->printVersus(cs[5], cs[3].name, n);
        printRow(cs[6], &cs[0]);
        std::printf("  look-back scan, other operators:\n");
        ok = benchOperator<Add<float>>("add-f32", n, block, rounds, batch, o) && ok;
        ok = benchOperator<Mssp>("mssp", n, block, rounds, batch, o) && ok;
    }
    return ok ? 0 : 1;
}
