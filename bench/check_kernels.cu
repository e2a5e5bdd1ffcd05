// scanlab-check: the reference's reduce and look-back scan (the plans of harness/tasks/,
// with the solution's files) run many times on the GPU, each output compared with the
// CPU reference: a race that shows once in a thousand launches shows here.
//
//   scanlab-check repeat SECONDS   sizes from 1 to 2^24+3, add-i32, add-f32 and mssp,
//                                  inclusive and exclusive, and the reduce, round after
//                                  round until SECONDS have passed
//   scanlab-check sanitize         each once at a few small sizes (for compute-sanitizer)
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#define SCANLAB_STUDENT_UNIT 1
#include "harness/check.h"
#include "harness/host/generate.h"
#include "harness/host/reference.h"
#include "harness/runtime.cuh"

using namespace scanlab;

namespace {

struct Tally {
    long runs = 0, wrong = 0;
};

template <class OpT>
bool same(const std::vector<typename OpT::Element>& a, const std::vector<typename OpT::Element>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (!OpT::equal(a[i], b[i], 0.0)) return false;
    return true;
}

// One size and operator: `times` launches of each plan, each output checked (exactly
// against the CPU reference for exact operators; within the checker's tolerance for
// floats, whose look-back may combine a tile's predecessors in another grouping).
template <class OpT>
void one(const char* op, size_t n, int times, unsigned seed, Tally& t) {
    using T = typename OpT::Element;
    constexpr bool kExact = !std::is_floating_point_v<T>;
    const unsigned block = 256;
    const std::vector<T> input = generateInput<OpT>(n, seed, Distribution::Random);
    DeviceBuffer<T> in(n), out(n), result(1);
    in.upload(input);
    Workspace<OpT> ws;
    const auto incl = referenceOutput<OpT>(Task::LookbackScan, input);
    const auto excl = referenceOutput<OpT>(Task::LookbackScanExclusive, input);
    const auto red = referenceOutput<OpT>(Task::Reduce, input);
    for (int r = 0; r < times; ++r) {
        for (int inclusive = 0; inclusive < 2; ++inclusive) {
            std::vector<T> poison(n, input[n / 2]);
            out.upload(poison);
            if (inclusive)
                lookbackScan<OpT, true>(in.data(), n, out.data(), block, ws.forRun(n, block).tiles);
            else
                lookbackScan<OpT, false>(in.data(), n, out.data(), block, ws.forRun(n, block).tiles);
            const auto got = out.download();
            const Task task = inclusive ? Task::LookbackScan : Task::LookbackScanExclusive;
            const bool right = kExact ? same<OpT>(got, inclusive ? incl : excl)
                                      : checkOutput<OpT>(task, input, got).passed();
            ++t.runs;
            if (!right) {
                ++t.wrong;
                std::printf("WRONG: look-back %s %s n=%zu run %d\n", inclusive ? "inclusive" : "exclusive", op, n, r);
            }
        }
        reduce<OpT>(in.data(), n, result.data(), block, ws.blockResults.data());
        const auto got = result.download();
        const bool right = kExact ? same<OpT>(got, red) : checkOutput<OpT>(Task::Reduce, input, got).passed();
        ++t.runs;
        if (!right) {
            ++t.wrong;
            std::printf("WRONG: reduce %s n=%zu run %d\n", op, n, r);
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (deviceCount() == 0) {
        std::printf("scanlab-check: no CUDA device\n");
        return 77;
    }
    const std::string mode = argc > 1 ? argv[1] : "repeat";
    Tally t;
    if (mode == "sanitize") {
        for (size_t n : {size_t(1), size_t(1000), size_t(5120 * 3 + 7), size_t(1) << 16, (size_t(1) << 18) + 5}) {
            one<Add<int32_t>>("add-i32", n, 1, 3, t);
            one<Mssp>("mssp", n, 1, 3, t);
        }
    } else {
        const double seconds = argc > 2 ? std::atof(argv[2]) : 30;
        const auto start = std::chrono::steady_clock::now();
        const size_t sizes[] = {1, 33, 5119, 5121, 5120 * 7 + 3, 100003, (size_t(1) << 20) + 5, size_t(1) << 22,
                                (size_t(1) << 24) + 3};
        for (unsigned round = 0;; ++round) {
            for (size_t n : sizes) {
                const int times = n <= (size_t(1) << 20) ? 20 : 2;
                one<Add<int32_t>>("add-i32", n, times, 11 + round, t);
                one<Add<float>>("add-f32", n, times / 2 + 1, 11 + round, t);
                one<Mssp>("mssp", n, times / 2 + 1, 11 + round, t);
            }
            const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            std::printf("round %u: %ld runs, %ld wrong, %.0f s\n", round, t.runs, t.wrong, spent);
            std::fflush(stdout);
            if (spent > seconds) break;
        }
    }
    std::printf("scanlab-check %s: %ld runs, %ld wrong\n", mode.c_str(), t.runs, t.wrong);
    return t.wrong == 0 ? 0 : 1;
}
