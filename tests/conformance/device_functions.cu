// Conformance of the CPU emulator with CUDA: every device function that
// handout/emulator/device_functions.def marks as emulated runs here, on one block of 64
// threads (two warps) over fixed inputs (edge values, then pseudo-random ones), and its
// results are written, one line a value, to a file (the cases: device_function_cases.cuh).
// The same source builds with nvcc (the GPU) and with g++ against the emulator
// (conformance_emu.cpp); `compare` reads both files and says which functions agree.
//   device_functions run OUT          run every case, write OUT; exit 1 if a spot check
//                                     (a value from the Programming Guide's definition)
//                                     fails or the cases and the list differ
//   device_functions compare GPU EMU  agreement per function (exact, or within the GPU's
//                                     documented error for the approximate intrinsics)
//   device_functions coverage         "N of M listed functions" (the README's figure)
// Exits 77 (skipped) from `run` on a machine without a GPU, for the nvcc build.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#define CONF_LAUNCH(kernel, blocks, threads, shared, ...) \
    kernel<<<blocks, threads, shared>>>(__VA_ARGS__)
#else
#include "emulator/cuda_emu.h"
#define CONF_LAUNCH(kernel, blocks, threads, shared, ...) \
    ::scanlab::emu::launch(#kernel, dim3(blocks), dim3(threads), shared, [=] { kernel(__VA_ARGS__); })
#endif

namespace conformance {

constexpr int kThreads = 64;  // two warps
constexpr int kSlots = 4;     // result words a thread may write per case
using u64 = unsigned long long;

struct Inputs {
    unsigned u[3];
    int i[3];
    float f[3];      // anything, edge values included (exact functions)
    float g[3];      // moderate: [-8, 8] (the approximate intrinsics)
    double d[3];
    u64 w[2];
};

struct Entry {
    const char* name;
    const char* group;
    const char* emulated;
};
// The list, the only copy (handout/emulator/device_functions.def).
#define SCANLAB_EMU_FN(name, group, emulated) {#name, #group, #emulated},
const Entry kListed[] = {
#include "emulator/device_functions.def"
};
#undef SCANLAB_EMU_FN

// Bits of a result, with how to compare it.
template <class T>
__host__ __device__ inline u64 bitsOf(T v) {
    u64 b = 0;
    memcpy(&b, &v, sizeof(T));
    return b;
}

// A case: Case::run(in, out, scratch) runs on every thread; out has kSlots words.
template <class Case>
__global__ void caseKernel(const Inputs* in, u64* out, u64* scratch) {
    const int t = threadIdx.x;
    Case::run(in[t], out + t * kSlots, scratch);
}

struct Registered {
    const char* name;
    char kind;  // 'i' integer bits, 'f' float, 'd' double
    bool approximate;
    void (*launch)(const Inputs*, u64*, u64*);
};
std::vector<Registered>& registry() {
    static std::vector<Registered> cases;
    return cases;
}
struct Register {
    Register(Registered r) { registry().push_back(r); }
};

#define CONF_CASE(fn, kind, approx, body)                                                      \
    struct Case_##fn {                                                                          \
        static __device__ void run(const Inputs& in, u64* out, u64* scratch) {                  \
            (void)in; (void)out; (void)scratch;                                                 \
            body                                                                                \
        }                                                                                       \
    };                                                                                          \
    void launch_##fn(const Inputs* in, u64* out, u64* scratch) {                                \
        CONF_LAUNCH(caseKernel<Case_##fn>, 1, kThreads, 0, in, out, scratch);                   \
    }                                                                                           \
    Register register_##fn({#fn, kind, approx, launch_##fn});
// One value a thread.
#define CONF_MAP(fn, kind, expr) CONF_CASE(fn, kind, false, out[0] = bitsOf(expr);)
#define CONF_APPROX(fn, expr) CONF_CASE(fn, 'f', true, out[0] = bitsOf(expr);)

#include "device_function_cases.cuh"

// ---- inputs
Inputs makeInput(int t) {
    static const unsigned edgeU[] = {0u, 1u, 2u, 0x7fffffffu, 0x80000000u, 0xffffffffu,
                                     0x00ffffffu, 0x01000000u, 0x00800000u, 0xff800000u,
                                     31u, 32u, 33u, 0x12345678u, 0xdeadbeefu, 0x0000ffffu};
    static const float edgeF[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1e-40f, 3.4e38f, INFINITY,
                                  -INFINITY, NAN, 1.5f, 2.5f, -2.5f, 0.1f, 1e10f, -7.75f};
    u64 x = 0x9e3779b97f4a7c15ull * (t + 1);
    auto next = [&x] {
        x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ull; x ^= x >> 27; x *= 0x94d049bb133111ebull; x ^= x >> 31;
        return x;
    };
    Inputs in{};
    for (int k = 0; k < 3; ++k) {
        const u64 r = next();
        in.u[k] = t < 16 ? edgeU[(t + 5 * k) % 16] : static_cast<unsigned>(r);
        in.i[k] = static_cast<int>(t < 16 ? edgeU[(t + 3 * k) % 16] : static_cast<unsigned>(r >> 32));
        in.f[k] = t < 16 ? edgeF[(t + 7 * k) % 16]
                         : static_cast<float>(static_cast<int>(r % 200001) - 100000) / 997.0f;
        in.g[k] = static_cast<float>(static_cast<int>(r % 16001) - 8000) / 1000.0f;
        in.d[k] = t < 16 ? static_cast<double>(edgeF[(t + 5 * k) % 16]) * 1.0000001
                         : static_cast<double>(static_cast<long long>(r % 2000001) - 1000000) / 977.0;
        if (in.g[k] == 0.0f) in.g[k] = 0.5f;
    }
    in.w[0] = t < 16 ? (u64)edgeU[t] << (t % 33) : next();
    in.w[1] = t < 16 ? ~((u64)edgeU[(t + 1) % 16] << 7) : next();
    return in;
}

bool check(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return true;
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    return false;
}

// "name slot thread kind value" lines.
int run(const char* path) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("no GPU: skipped\n");
        return 77;
    }
    int status = 0;
    // The cases and the list agree.
    std::set<std::string> emulated, cases;
    for (const Entry& e : kListed)
        if (std::string(e.emulated) == "yes") emulated.insert(e.name);
    for (const Registered& r : registry()) cases.insert(r.name);
    for (const std::string& n : emulated)
        if (!cases.count(n)) { std::printf("FAIL %s: listed as emulated, but no conformance case\n", n.c_str()); status = 1; }
    for (const std::string& n : cases)
        if (!emulated.count(n)) { std::printf("FAIL %s: a conformance case, but not listed as emulated\n", n.c_str()); status = 1; }

    std::vector<Inputs> host(kThreads);
    for (int t = 0; t < kThreads; ++t) host[t] = makeInput(t);
    Inputs* in = nullptr;
    u64 *out = nullptr, *scratch = nullptr;
    if (!check(cudaMalloc(&in, sizeof(Inputs) * kThreads), "cudaMalloc") ||
        !check(cudaMalloc(&out, sizeof(u64) * kThreads * kSlots), "cudaMalloc") ||
        !check(cudaMalloc(&scratch, sizeof(u64) * 256), "cudaMalloc"))
        return 1;
    cudaMemcpy(in, host.data(), sizeof(Inputs) * kThreads, cudaMemcpyHostToDevice);
    std::ofstream file(path);
    std::vector<u64> results(kThreads * kSlots);
    for (const Registered& r : registry()) {
        cudaMemset(out, 0, sizeof(u64) * kThreads * kSlots);
        cudaMemset(scratch, 0, sizeof(u64) * 256);
        r.launch(in, out, scratch);
        if (!check(cudaDeviceSynchronize(), r.name)) { std::printf("FAIL %s: the kernel failed\n", r.name); status = 1; continue; }
        cudaMemcpy(results.data(), out, sizeof(u64) * results.size(), cudaMemcpyDeviceToHost);
        for (int t = 0; t < kThreads; ++t)
            for (int s = 0; s < kSlots; ++s)
                file << r.name << ' ' << s << ' ' << t << ' ' << r.kind << (r.approximate ? "~" : "")
                     << ' ' << std::hex << results[t * kSlots + s] << std::dec << '\n';
    }
    // Spot checks.
    int* ok = nullptr;
    cudaMalloc(&ok, sizeof(int) * kSpots);
    CONF_LAUNCH(spotKernel, 1, 1, 0, ok);
    std::vector<int> okHost(kSpots);
    check(cudaDeviceSynchronize(), "spotKernel");
    cudaMemcpy(okHost.data(), ok, sizeof(int) * kSpots, cudaMemcpyDeviceToHost);
    int spotsFailed = 0;
    for (int k = 0; k < kSpots; ++k)
        if (!okHost[k]) { std::printf("FAIL spot check: %s\n", kSpotText[k]); ++spotsFailed; }
    unsigned* wok = nullptr;
    cudaMalloc(&wok, sizeof(unsigned) * 32);
    CONF_LAUNCH(warpSpotKernel, 1, 32, 0, wok);
    check(cudaDeviceSynchronize(), "warpSpotKernel");
    std::vector<unsigned> wHost(32);
    cudaMemcpy(wHost.data(), wok, sizeof(unsigned) * 32, cudaMemcpyDeviceToHost);
    for (int k = 0; k < kWarpSpots; ++k)
        for (int l = 0; l < 32; ++l)
            if (!(wHost[l] >> k & 1)) { std::printf("FAIL warp spot check %d at lane %d\n", k, l); ++spotsFailed; break; }
    std::printf("%zu cases run, %d of %d spot checks passed\n", registry().size(),
                kSpots + kWarpSpots - spotsFailed, kSpots + kWarpSpots);
    cudaFree(in); cudaFree(out); cudaFree(scratch); cudaFree(ok); cudaFree(wok);
    return status || spotsFailed ? 1 : 0;
}

struct Value {
    char kind;
    bool approximate;
    u64 bits;
};
std::map<std::string, std::map<std::pair<int, int>, Value>> readResults(const char* path) {
    std::map<std::string, std::map<std::pair<int, int>, Value>> all;
    std::ifstream file(path);
    std::string name, kind, hex;
    int slot, t;
    while (file >> name >> slot >> t >> kind >> hex)
        all[name][{slot, t}] = Value{kind[0], kind.size() > 1, std::stoull(hex, nullptr, 16)};
    return all;
}
bool agree(const Value& a, const Value& b) {
    if (a.bits == b.bits) return true;
    if (a.kind == 'f' || a.kind == 'd') {
        double x, y;
        if (a.kind == 'f') {
            float fx, fy;
            const unsigned ux = static_cast<unsigned>(a.bits), uy = static_cast<unsigned>(b.bits);
            memcpy(&fx, &ux, 4); memcpy(&fy, &uy, 4);
            x = fx; y = fy;
        } else {
            memcpy(&x, &a.bits, 8); memcpy(&y, &b.bits, 8);
        }
        if (std::isnan(x) && std::isnan(y)) return true;  // NaN payloads differ by backend
        // The approximate intrinsics: within their documented error (a few ulps on
        // these inputs; 2^-21.4 absolute for sine and cosine).
        if (a.approximate) return std::fabs(x - y) <= 2e-6 * std::fabs(x) + 4e-7;
    }
    return false;
}
int compare(const char* gpuPath, const char* emuPath) {
    const auto gpu = readResults(gpuPath), emu = readResults(emuPath);
    int agreeing = 0, total = 0;
    for (const auto& [name, values] : gpu) {
        ++total;
        const auto it = emu.find(name);
        if (it == emu.end()) { std::printf("DIFFER %s: not run on the emulator\n", name.c_str()); continue; }
        int bad = 0;
        std::string first;
        for (const auto& [key, v] : values) {
            const auto e = it->second.find(key);
            if (e == it->second.end() || !agree(v, e->second)) {
                if (!bad++) {
                    std::ostringstream o;
                    o << "slot " << key.first << " thread " << key.second << ": GPU " << std::hex << v.bits
                      << ", emulator " << (e == it->second.end() ? 0 : e->second.bits);
                    first = o.str();
                }
            }
        }
        if (bad) std::printf("DIFFER %s: %d value(s), first %s\n", name.c_str(), bad, first.c_str());
        else ++agreeing;
    }
    for (const auto& [name, values] : emu)
        if (!gpu.count(name)) { ++total; std::printf("DIFFER %s: not run on the GPU\n", name.c_str()); }
    std::printf("agreement: %d of %d functions agree between the GPU and the emulator\n", agreeing, total);
    return agreeing == total && total > 0 ? 0 : 1;
}

int coverage() {
    int listed = 0, emulated = 0;
    for (const Entry& e : kListed) {
        ++listed;
        emulated += std::string(e.emulated) == "yes";
    }
    std::printf("coverage: %d of %d listed functions\n", emulated, listed);
    for (const Entry& e : kListed)
        if (std::string(e.emulated) != "yes") std::printf("  not emulated: %s (%s)\n", e.name, e.group);
    return 0;
}

}  // namespace conformance

int main(int argc, char** argv) {
    const std::string cmd = argc > 1 ? argv[1] : "";
    if (cmd == "run" && argc == 3) return conformance::run(argv[2]);
    if (cmd == "compare" && argc == 4) return conformance::compare(argv[2], argv[3]);
    if (cmd == "coverage") return conformance::coverage();
    std::fprintf(stderr, "usage: %s run OUT | compare GPU_OUT EMU_OUT | coverage\n", argv[0]);
    return 2;
}
