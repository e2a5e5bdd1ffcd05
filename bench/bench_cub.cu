// make bench: the reference reduce and three-phase scan against CUB's
// DeviceReduce::Sum and DeviceScan::InclusiveSum and a device-to-device copy, for
// int32 at 2^20, 2^24 and 2^28 elements, all measured in this run on this GPU.
//
// Targets on an H100: reduce >= 0.9x CUB; scan >= 0.6x CUB (the three-phase scan
// moves 3n elements to CUB's 2n, so 0.67x is its bound).
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <cstdio>
#include <vector>

#include "harness/generate.h"
#include "harness/plans.cuh"
#include "harness/run.h"
#include "harness/runtime.cuh"

using namespace scanlab;
using Op = Add<int32_t>;

namespace {

struct Row {
    const char* name;
    double ms;
    double bytes;  // useful bytes moved
};

void printRow(const Row& r, double cubMs) {
    std::printf("  %-28s %9.4f ms %9.1f GB/s   %5.2fx CUB\n", r.name, r.ms, r.bytes / (r.ms * 1e6),
                cubMs / r.ms);
}

}  // namespace

int main(int argc, char** argv) {
    if (deviceCount() == 0) {
        std::printf("scanlab-bench: no CUDA device found: nothing measured\n");
        return 77;
    }
    const unsigned block = argc > 1 ? unsigned(std::atoi(argv[1])) : 256;
    const int reps = 30;
    const DeviceInfo dev = queryDevice();
    std::printf("scanlab-bench on %s (cc %d.%d, %d SMs), int32 add, block %u, median of %d runs\n",
                dev.name.c_str(), dev.computeMajor, dev.computeMinor, dev.multiprocessors, block,
                reps);
    bool ok = true;
    for (int log2n : {20, 24, 28}) {
        const size_t n = size_t(1) << log2n;
        const auto input = generateInput<Op>(n, 7, Distribution::Random);
        DeviceBuffer<int32_t> in(n), out(n), copy(n), result(1);
        in.upload(input);
        Workspace<Op> ws;
        size_t reduceTemp = 0, scanTemp = 0;
        cub::DeviceReduce::Sum(nullptr, reduceTemp, in.data(), result.data(), int64_t(n));
        cub::DeviceScan::InclusiveSum(nullptr, scanTemp, in.data(), out.data(), int64_t(n));
        DeviceBuffer<unsigned char> temp(std::max(reduceTemp, scanTemp));
        const double elem = sizeof(int32_t) * double(n);
        auto none = [] {};

        const Timing tCopy = timeGpu("copy", 3, reps, [&] { copy.copyFrom(in); }, none);
        const Timing tCubReduce = timeGpu("cub reduce", 3, reps, [&] {
            size_t bytes = reduceTemp;
            cub::DeviceReduce::Sum(temp.data(), bytes, in.data(), result.data(), int64_t(n));
        }, none);
        const Timing tReduce = timeGpu("reduce", 3, reps, [&] {
            reduce<Op>(in.data(), n, result.data(), block, ws);
        }, none);
        const bool reduceOk = result.download()[0] == referenceReduce<Op>(input);
        const Timing tCubScan = timeGpu("cub scan", 3, reps, [&] {
            size_t bytes = scanTemp;
            cub::DeviceScan::InclusiveSum(temp.data(), bytes, in.data(), out.data(), int64_t(n));
        }, none);
        const Timing tScan = timeGpu("scan", 3, reps, [&] {
            scan<Op, true>(in.data(), n, out.data(), block, ws);
        }, none);
        const bool scanOk = checkOutput<Op>(Task::Scan, input, out.download()).passed();
        ok = ok && reduceOk && scanOk;

        std::printf("\nn = 2^%d (%zu elements)%s\n", log2n, n,
                    reduceOk && scanOk ? "" : "  RESULT CHECK FAILED");
        std::printf("  %-28s %9.4f ms %9.1f GB/s\n", "device-to-device copy", tCopy.medianMs,
                    2 * elem / (tCopy.medianMs * 1e6));
        printRow({"cub::DeviceReduce::Sum", tCubReduce.medianMs, elem}, tCubReduce.medianMs);
        printRow({"reference reduce", tReduce.medianMs, elem}, tCubReduce.medianMs);
        printRow({"cub::DeviceScan::InclusiveSum", tCubScan.medianMs, 2 * elem}, tCubScan.medianMs);
        printRow({"reference scan (3-phase)", tScan.medianMs, 2 * elem}, tCubScan.medianMs);
    }
    return ok ? 0 : 1;
}
