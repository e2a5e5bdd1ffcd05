// scanlab CPU emulator: device memory. Every cudaMalloc allocation sits between two
// guard zones filled with a pattern, inside a reserved stretch of address space that
// nothing else is mapped into:
//
//   [no access: reach][front guard][the allocation, 256-aligned][tail guard][no access: reach]
//
// `reach` is the allocation's own size (at least 1 MiB, at most 64 MiB): an access up to
// that far past the end (or before the start) lands in this allocation's stretch, so it
// is named after this buffer, never after a neighbour. The student unit's loads and
// stores are checked against these stretches as they happen (emu_bounds.cpp), with the
// thread and the source line. Code that is not instrumented (the harness's kernels) is
// caught afterwards: the guards are compared with the pattern after each launch, a
// kernel that wrote into one is named with the elements it wrote ("scanBlocksKernel
// wrote out[1000] to out[1023], 1 to 24 elements past the end of `out`"), the launch
// fails, and the guard is restored, so the next case runs on an intact heap; an access
// farther than a guard faults on the inaccessible reach (emu_faults.cpp).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "emulator/emu_internal.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define SCANLAB_EMU_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define SCANLAB_EMU_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define SCANLAB_EMU_POISON(p, n) ((void)(p), (void)(n))
#define SCANLAB_EMU_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace scanlab::emu::detail {

namespace {

constexpr size_t kGuardBytes = 16 * 1024;  // two tiles of 2048 4-byte elements
constexpr unsigned char kGuardByte = 0xfd;
constexpr size_t kMinReach = size_t(1) << 20;
// At most 64 MiB: the reaches count against a sandbox's address-space limit.
constexpr size_t kMaxReach = size_t(64) << 20;

struct Allocation {
    char* mapping = nullptr;  // what mmap returned
    size_t mappingBytes = 0;
    size_t size = 0;  // what cudaMalloc was asked for
    size_t tailBytes = 0;  // of guard after the allocation, up to the inaccessible reach
    size_t reach = 0;  // bytes of inaccessible address space at each end of the mapping
    std::string name;  // nameAllocation: "out", "in", ...
    size_t elementBytes = 0;
};

struct Allocations {
    std::mutex m;
    std::map<uintptr_t, Allocation> live;  // by the pointer cudaMalloc returned
    // The same, by mapping (sorted, disjoint), for the bounds check of every access:
    // rebuilt by each cudaMalloc and cudaFree, read without the lock while a kernel runs.
    std::vector<DeviceStretch> stretches;
    void rebuildStretches() {
        stretches.clear();
        for (const auto& [base, a] : live) {
            const auto lo = reinterpret_cast<uintptr_t>(a.mapping);
            stretches.push_back(DeviceStretch{lo, lo + a.mappingBytes, base, base + a.size});
        }
        std::sort(stretches.begin(), stretches.end(),
                  [](const DeviceStretch& x, const DeviceStretch& y) { return x.mapLo < y.mapLo; });
    }
};

Allocations& allocations() {
    static Allocations a;
    return a;
}

size_t pageBytes() {
    static const size_t page = size_t(sysconf(_SC_PAGESIZE));
    return page;
}

size_t roundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

// The first and last byte of [p, p+n) that differ from the guard pattern, or n.
std::pair<size_t, size_t> changedBytes(const char* p, size_t n) {
    size_t first = n, last = n;
    for (size_t i = 0; i < n; ++i) {
        if (static_cast<unsigned char>(p[i]) != kGuardByte) {
            if (first == n) first = i;
            last = i;
        }
    }
    return {first, last};
}

std::string plural(long long k, const char* one, const char* many) {
    return std::to_string(k) + " " + (k == 1 ? one : many);
}

std::string elements(long long k) { return k == 1 ? "one" : plural(k, "element", "elements"); }

std::string ordinal(size_t k) {
    const size_t tens = k % 100;
    const char* suffix = tens >= 11 && tens <= 13 ? "th"
                         : k % 10 == 1             ? "st"
                         : k % 10 == 2             ? "nd"
                         : k % 10 == 3             ? "rd"
                                                   : "th";
    return std::to_string(k) + suffix;
}

// "your kernel's 2nd parameter" (or "1st and 3rd parameters"): the kernel's arguments
// that point into `a`, from the first element to one past the end; "" when none does.
// The parameter's name is the student's and is not known here: its position is.
std::string parametersInto(const Allocation& a, uintptr_t base,
                           const std::vector<const void*>& arguments) {
    std::vector<size_t> found;
    for (size_t k = 0; k < arguments.size(); ++k) {
        const auto p = reinterpret_cast<uintptr_t>(arguments[k]);
        if (arguments[k] != nullptr && p >= base && p <= base + a.size) found.push_back(k + 1);
    }
    if (found.empty()) return "";
    std::string which;
    for (size_t i = 0; i < found.size(); ++i) {
        if (i > 0) which += i + 1 == found.size() ? " and " : ", ";
        which += ordinal(found[i]);
    }
    return "your kernel's " + which + (found.size() == 1 ? " parameter" : " parameters");
}

// "in[1011], 12 elements past the end of `in` (n = 1000; the harness's name for your
// kernel's 1st parameter)", or for several elements "out[1000] to out[1023], 1 to 24
// elements past the end of `out` (n = 1000; ...)". `firstByte` and `lastByte` are offsets
// from the allocation's start at `base` (negative: before it).
std::string describeElements(const Allocation& a, uintptr_t base, long long firstByte,
                             long long lastByte, const std::vector<const void*>& arguments) {
    const bool before = firstByte < 0;
    const auto size = static_cast<long long>(a.size);
    const std::string parameter = parametersInto(a, base, arguments);
    if (a.name.empty() || a.elementBytes == 0) {
        const long long out = before ? -lastByte : firstByte - size + 1;
        return "byte " + std::to_string(firstByte) + " of a " + std::to_string(a.size) +
               "-byte device allocation" + (parameter.empty() ? "" : " (" + parameter + ")") +
               ", " + plural(out, "byte", "bytes") +
               (before ? " before its start" : " past its end");
    }
    const auto e = static_cast<long long>(a.elementBytes);
    const long long count = size / e;
    auto index = [&](long long byte) { return byte >= 0 ? byte / e : -((-byte + e - 1) / e); };
    const long long first = index(firstByte), last = index(lastByte);
    std::string what = a.name + "[" + std::to_string(first) + "]";
    if (last != first) what += " to " + a.name + "[" + std::to_string(last) + "]";
    // How far out: element n is one past the end, element -1 one before the start.
    const long long nearest = before ? -last : first - count + 1;
    const long long farthest = before ? -first : last - count + 1;
    std::string where = nearest == farthest
                            ? elements(nearest)
                            : std::to_string(nearest) + " to " + plural(farthest, "element", "elements");
    where += before ? " before the start" : " past the end";
    // The name is the one the harness gave the allocation: the student's kernel may call
    // it otherwise, so the message says whose name it is, and which parameter it was.
    return what + ", " + where + " of `" + a.name + "` (n = " + std::to_string(count) +
           "; the harness's name" + (parameter.empty() ? "" : " for " + parameter) + ")";
}

}  // namespace

void* allocateDevice(size_t size) {
    const size_t page = pageBytes();
    const size_t body = roundUp(std::max<size_t>(size, 1), 256);
    const size_t reach = roundUp(std::clamp<size_t>(body, kMinReach, kMaxReach), page);
    // [reach][guard][body][tail guard .. page boundary][reach], all reserved at once
    // (the reaches take address space, no memory).
    const size_t front = reach + kGuardBytes;
    const size_t tailEnd = roundUp(front + body + kGuardBytes, page);
    const size_t total = tailEnd + reach;
    void* m = mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return nullptr;
    char* mapping = static_cast<char*>(m);
    if (mprotect(mapping + reach, tailEnd - reach, PROT_READ | PROT_WRITE) != 0) {
        munmap(mapping, total);
        return nullptr;
    }
    char* p = mapping + front;
    std::memset(mapping + reach, kGuardByte, kGuardBytes);
    // Device memory starts with garbage on a GPU too: never zeros by luck.
    std::memset(p, 0xcd, size);
    Allocation a;
    a.mapping = mapping;
    a.mappingBytes = total;
    a.size = size;
    a.reach = reach;
    a.tailBytes = size_t(mapping + tailEnd - (p + size));
    std::memset(p + size, kGuardByte, a.tailBytes);
    SCANLAB_EMU_POISON(mapping + reach, kGuardBytes);
    SCANLAB_EMU_POISON(p + size, a.tailBytes);
    Allocations& all = allocations();
    std::lock_guard<std::mutex> lock(all.m);
    all.live[reinterpret_cast<uintptr_t>(p)] = std::move(a);
    all.rebuildStretches();
    return p;
}

bool freeDevice(void* p) {
    Allocation a;
    {
        Allocations& all = allocations();
        std::lock_guard<std::mutex> lock(all.m);
        auto it = all.live.find(reinterpret_cast<uintptr_t>(p));
        if (it == all.live.end()) return false;
        a = std::move(it->second);
        all.live.erase(it);
        all.rebuildStretches();
    }
    SCANLAB_EMU_UNPOISON(a.mapping, a.mappingBytes);
    munmap(a.mapping, a.mappingBytes);
    return true;
}

std::string checkDeviceRange(const void* p, size_t count) {
    Allocations& all = allocations();
    std::lock_guard<std::mutex> lock(all.m);
    const uintptr_t u = reinterpret_cast<uintptr_t>(p);
    auto it = all.live.upper_bound(u);
    if (it == all.live.begin()) return "";
    --it;
    const uintptr_t base = it->first;
    const size_t size = it->second.size;
    if (u >= base + size) return "";
    if (count > size - (u - base)) {
        return "range of " + std::to_string(count) + " bytes at offset " +
               std::to_string(u - base) + " runs past the end of its " + std::to_string(size) +
               "-byte device allocation";
    }
    return "";
}

std::string checkGuards(const char* kernel, const std::vector<const void*>& arguments) {
    Allocations& all = allocations();
    std::lock_guard<std::mutex> lock(all.m);
    std::string found;
    for (auto& [base, a] : all.live) {
        char* p = reinterpret_cast<char*>(base);
        char* front = a.mapping + a.reach;
        SCANLAB_EMU_UNPOISON(front, kGuardBytes);
        SCANLAB_EMU_UNPOISON(p + a.size, a.tailBytes);
        const auto [f0, f1] = changedBytes(front, kGuardBytes);
        const auto [t0, t1] = changedBytes(p + a.size, a.tailBytes);
        if (found.empty() && f0 != kGuardBytes) {
            found = describeElements(a, base, static_cast<long long>(f0) - static_cast<long long>(kGuardBytes),
                                     static_cast<long long>(f1) - static_cast<long long>(kGuardBytes),
                                     arguments);
        } else if (found.empty() && t0 != a.tailBytes) {
            found = describeElements(a, base, static_cast<long long>(a.size + t0),
                                     static_cast<long long>(a.size + t1), arguments);
        }
        if (f0 != kGuardBytes) std::memset(front, kGuardByte, kGuardBytes);
        if (t0 != a.tailBytes) std::memset(p + a.size, kGuardByte, a.tailBytes);
        SCANLAB_EMU_POISON(front, kGuardBytes);
        SCANLAB_EMU_POISON(p + a.size, a.tailBytes);
    }
    if (found.empty()) return "";
    return "emulator: kernel " + std::string(kernel) + " wrote " + found;
}

bool isDeviceAddress(const void* address) {
    const uintptr_t u = reinterpret_cast<uintptr_t>(address);
    const Allocations& all = allocations();
    auto it = all.live.upper_bound(u);
    if (it == all.live.begin()) return false;
    --it;
    return u < it->first + it->second.size;
}

std::string describeDeviceAddress(const void* address, const std::vector<const void*>& arguments) {
    // Called from the fault handler while a kernel runs: no cudaMalloc or cudaFree can
    // run then (launches are synchronous), so the map is read without its lock.
    const uintptr_t u = reinterpret_cast<uintptr_t>(address);
    const Allocations& all = allocations();
    for (const auto& [base, a] : all.live) {
        const uintptr_t start = reinterpret_cast<uintptr_t>(a.mapping);
        if (u < start || u >= start + a.mappingBytes) continue;
        const auto offset = static_cast<long long>(u) - static_cast<long long>(base);
        return describeElements(a, base, offset, offset, arguments);
    }
    return "";
}

const std::vector<DeviceStretch>& deviceStretches() { return allocations().stretches; }

std::string describeDeviceAccess(uintptr_t address, size_t bytes,
                                 const std::vector<const void*>& arguments) {
    const Allocations& all = allocations();
    for (const auto& [base, a] : all.live) {
        const auto start = reinterpret_cast<uintptr_t>(a.mapping);
        if (address < start || address >= start + a.mappingBytes) continue;
        // The bytes of the access that are outside the allocation (a wide access can
        // straddle its end).
        long long lo = static_cast<long long>(address) - static_cast<long long>(base);
        long long hi = lo + static_cast<long long>(bytes) - 1;
        if (lo < 0) hi = std::min(hi, -1LL);
        else lo = std::max(lo, static_cast<long long>(a.size));
        return describeElements(a, base, lo, hi, arguments);
    }
    return "";
}

}  // namespace scanlab::emu::detail

namespace scanlab::emu {

void nameAllocation(const void* p, const char* name, size_t elementBytes) {
    detail::Allocations& all = detail::allocations();
    std::lock_guard<std::mutex> lock(all.m);
    auto it = all.live.find(reinterpret_cast<uintptr_t>(p));
    if (it == all.live.end()) return;
    it->second.name = name != nullptr ? name : "";
    it->second.elementBytes = elementBytes;
}

}  // namespace scanlab::emu
