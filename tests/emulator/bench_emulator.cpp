// Emulator throughput: elements per second of each task (warp scan, reduce,
// inclusive scan) for add-i32 at 2^20 elements, through the harness plans
// (Plan<T>, harness/tasks/) with the reference kernels. The emulator's cost is mostly
// fiber switches at synchronization points, so this is what bounds how long the
// correctness suite takes on a CPU.
//
//   bench_emulator [log2 n = 20] [block size = 256] [repetitions = 5]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// The task headers' plans with the reference kernels: a student unit of its own.
#define SCANLAB_STUDENT_UNIT 1
#include "harness/generated/task_list.cuh"

namespace {

using Op = scanlab::Add<int32_t>;
using Clock = std::chrono::steady_clock;

template <class F>
double medianSeconds(int reps, F&& f) {
    f();  // warm-up: stacks, pages, worker threads
    std::vector<double> s;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = Clock::now();
        f();
        s.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    std::sort(s.begin(), s.end());
    return s[s.size() / 2];
}

void report(const char* task, size_t n, double seconds, bool ok) {
    std::printf("%-16s n=%zu  %8.2f ms  %10.3g elements/s  %s\n", task, n, seconds * 1e3,
                double(n) / seconds, ok ? "check ok" : "CHECK FAILED");
}

}  // namespace

int main(int argc, char** argv) {
    const int logN = argc > 1 ? std::atoi(argv[1]) : 20;
    const unsigned block = argc > 2 ? unsigned(std::atoi(argv[2])) : 256;
    const int reps = argc > 3 ? std::atoi(argv[3]) : 5;
    const size_t n = size_t(1) << logN;
    std::printf("scanlab emulator benchmark: add-i32, block %u, %u worker thread(s), seed %llu\n",
                block, scanlab::emu::workerThreads(),
                static_cast<unsigned long long>(scanlab::emu::scheduleSeed()));

    std::vector<int32_t> host(n);
    for (size_t i = 0; i < n; ++i) host[i] = int32_t((i * 2654435761u) % 201) - 100;
    std::vector<int32_t> expectScan(n);
    int32_t acc = 0;
    for (size_t i = 0; i < n; ++i) expectScan[i] = acc = acc + host[i];

    scanlab::DeviceBuffer<int32_t> in(n), out(n), result(1);
    in.upload(host);
    scanlab::Workspace<Op> ws;
    const auto scratch = ws.forRun(n, block);  // allocated once, outside the timing
    bool allOk = true;
    try {
        {
            const double s = medianSeconds(reps, [&] {
                scanlab::Plan<scanlab::tasks::WarpScan>::launch<Op>(in.data(), n, out.data(), block, scratch);
            });
            const auto got = out.download();
            bool ok = true;
            for (size_t i = 0; i < n && ok; ++i) {
                const size_t w = i / 32 * 32;
                ok = got[i] == expectScan[i] - (w ? expectScan[w - 1] : 0);
            }
            report("warp-scan", n, s, ok);
            allOk &= ok;
        }
        {
            const double s = medianSeconds(reps, [&] {
                scanlab::Plan<scanlab::tasks::Reduce>::launch<Op>(in.data(), n, result.data(), block, scratch);
            });
            const bool ok = result.download()[0] == expectScan[n - 1];
            report("reduce", n, s, ok);
            allOk &= ok;
        }
        {
            const double s = medianSeconds(reps, [&] {
                scanlab::Plan<scanlab::tasks::Scan>::launch<Op>(in.data(), n, out.data(), block, scratch);
            });
            const bool ok = out.download() == expectScan;
            report("inclusive scan", n, s, ok);
            allOk &= ok;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_emulator: %s\n", e.what());
        return 4;
    }
    return allOk ? 0 : 1;
}
