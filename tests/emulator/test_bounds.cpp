// The emulator's bounds check of every global-memory access (emulator/emu_bounds.h):
// this file is compiled as a student unit is (SCANLAB_EMU_CHECK_FLAGS), so each load and
// store of its kernels is checked against the allocation it lands near, and an access
// outside it stops the kernel with the buffer, the element, how far out, the thread and
// this file's line.
#include <catch2/catch.hpp>

#include <regex>
#include <string>

#include "emu_test_util.h"

using emutest::DeviceArray;
using emutest::ScheduleScope;
using emutest::takeError;
namespace emu = scanlab::emu;

namespace {
std::string at(int line) { return "emulator/test_bounds.cpp:" + std::to_string(line); }
}  // namespace

// Honest: the grid has more threads than elements, and the guard keeps them in bounds.
__global__ void copyGuardedKernel(const int* in, int* out, int n) {
    const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) out[i] = in[i] + 1;
}

constexpr int kReadPastLine = __LINE__ + 3;
__global__ void readPastKernel(const int* in, int* out, int n) {
    const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
    if (i == 5) out[0] = in[n + 11];  // BUG: 12 elements past the end
}

constexpr int kReadBeforeLine = __LINE__ + 3;
__global__ void readBeforeKernel(const int* in, int* out, int n) {
    const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) out[i] = in[i - 3];  // BUG: threads 0, 1, 2 read before the start
}

constexpr int kWriteOverrunLine = __LINE__ + 3;
__global__ void writeOverrunKernel(int* out, int n) {
    const int i = int(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n + 24) out[i] = i;  // BUG: 24 elements too many
}

TEST_CASE("honest kernels that stay in bounds are never stopped", "[bounds]") {
    DeviceArray<int> in(1000), out(1000);
    emu::nameAllocation(in.ptr, "in", sizeof(int));
    const int* p = in.ptr;
    int* q = out.ptr;
    emu::launch("copyGuardedKernel", dim3(4), dim3(256), 0, [=] { copyGuardedKernel(p, q, 1000); });
    CHECK(takeError().empty());
    CHECK(out.get()[999] == 1);
}

TEST_CASE("a read past the end names the buffer, the element and the line", "[bounds]") {
    ScheduleScope schedule(7);
    DeviceArray<int> in(1000), out(1);
    emu::nameAllocation(in.ptr, "in", sizeof(int));
    const int* p = in.ptr;
    int* q = out.ptr;
    cudaError_t code{};
    emu::launch("readPastKernel", dim3(1), dim3(64), 0, [=] { readPastKernel(p, q, 1000); });
    const std::string msg = takeError(&code);
    CHECK(code == cudaErrorIllegalAddress);
    CHECK(msg == "emulator: kernel readPastKernel: out-of-bounds read in block (0,0,0): thread "
                 "(5,0,0) read in[1011], 12 elements past the end of `in` (n = 1000; the harness's name), at " +
                     at(kReadPastLine));
    // The emulator is still usable, and the cache of what it looked up is not stale.
    DeviceArray<int> small(10);
    const int* s = small.ptr;
    emu::launch("copyGuardedKernel", dim3(1), dim3(32), 0, [=] { copyGuardedKernel(s, q, 1); });
    CHECK(takeError().empty());
}

TEST_CASE("a read before the start names the buffer, the element and the line", "[bounds]") {
    DeviceArray<int> in(100), out(100);
    emu::nameAllocation(in.ptr, "in", sizeof(int));
    const int* p = in.ptr;
    int* q = out.ptr;
    cudaError_t code{};
    emu::launch("readBeforeKernel", dim3(1), dim3(128), 0, [=] { readBeforeKernel(p, q, 100); });
    const std::string msg = takeError(&code);
    CHECK(code == cudaErrorIllegalAddress);
    // Whichever of threads 0, 1, 2 the random schedule runs first is the one named.
    std::smatch m;
    REQUIRE(std::regex_search(msg, m, std::regex(R"(thread \((\d),0,0\) read in\[-(\d)\], (one|\d elements) before the start of `in` \(n = 100; the harness's name\), at (.*)$)")));
    const int thread = std::stoi(m[1]);
    CHECK(std::stoi(m[2]) == 3 - thread);
    CHECK(m[3] == (thread == 2 ? std::string("one") : std::to_string(3 - thread) + " elements"));
    CHECK(m[4] == at(kReadBeforeLine));
    CHECK_THAT(msg, Catch::StartsWith("emulator: kernel readBeforeKernel: out-of-bounds read in block (0,0,0): "));
}

TEST_CASE("a write overrun names the element written and how far it is out", "[bounds]") {
    DeviceArray<int> out(1000);
    emu::nameAllocation(out.ptr, "out", sizeof(int));
    int* q = out.ptr;
    cudaError_t code{};
    emu::launch("writeOverrunKernel", dim3(1), dim3(1024), 0, [=] { writeOverrunKernel(q, 1000); });
    const std::string msg = takeError(&code);
    CHECK(code == cudaErrorIllegalAddress);
    // The first of threads 1000..1023 to run is stopped at its write, before it is made.
    std::smatch m;
    REQUIRE(std::regex_search(msg, m, std::regex(R"(out-of-bounds write in block \(0,0,0\): thread \((\d+),0,0\) wrote out\[(\d+)\], (one|\d+ elements) past the end of `out` \(n = 1000; the harness's name\), at (.*)$)")));
    const int index = std::stoi(m[2]);
    CHECK(std::stoi(m[1]) == index);
    CHECK((index >= 1000 && index < 1024));
    CHECK(m[3] == (index == 1000 ? std::string("one") : std::to_string(index - 999) + " elements"));
    CHECK(m[4] == at(kWriteOverrunLine));
    // Stopped before the write: no guard zone was touched, so only this message.
    CHECK_THAT(msg, !Catch::Contains("wrote out[1000] to"));
}

TEST_CASE("an overrun of an unnamed allocation is given in bytes", "[bounds]") {
    DeviceArray<int> in(10), out(1);
    const int* p = in.ptr;
    int* q = out.ptr;
    emu::launch("readPastKernel", dim3(1), dim3(32), 0, [=] { readPastKernel(p, q, 10); });
    CHECK_THAT(takeError(), Catch::Contains("thread (5,0,0) read byte 84 of a 40-byte device "
                                            "allocation, 45 bytes past its end, at " +
                                            at(kReadPastLine)));
}
