// scanlab CPU emulator: device memory. Every cudaMalloc allocation sits between two
// guard zones filled with a pattern, each followed by an inaccessible page:
//
//   [no access][front guard][the allocation, 256-aligned][tail guard][no access]
//
// After each launch the guards are compared with the pattern: a kernel that wrote
// past the end (or before the start) of an allocation is named with the element it
// wrote ("scanBlocksKernel wrote out[1000], one past the end of out"), the launch
// fails, and the guard is restored, so the next case runs on an intact heap. A write
// farther than the guard faults on the inaccessible page (emu_faults.cpp). Reads past
// the end are not seen here: `make emu-asan` poisons the guards for AddressSanitizer.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

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

struct Allocation {
    char* mapping = nullptr;  // what mmap returned
    size_t mappingBytes = 0;
    size_t size = 0;  // what cudaMalloc was asked for
    size_t tailBytes = 0;  // of guard after the allocation, up to the inaccessible page
    std::string name;  // nameAllocation: "out", "in", ...
    size_t elementBytes = 0;
};

struct Allocations {
    std::mutex m;
    std::map<uintptr_t, Allocation> live;  // by the pointer cudaMalloc returned
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

// "out[1000], one past the end of out (1000 elements of 4 bytes)". `firstByte` and
// `lastByte` are offsets from the allocation's start (negative: before it).
std::string describeWrite(const Allocation& a, long long firstByte, long long lastByte) {
    const bool before = firstByte < 0;
    if (a.name.empty() || a.elementBytes == 0) {
        return "byte " + std::to_string(firstByte) + " of a " + std::to_string(a.size) +
               "-byte device allocation (" +
               (before ? "before its start" : "past its end") + ")";
    }
    const auto e = static_cast<long long>(a.elementBytes);
    const auto count = static_cast<long long>(a.size / a.elementBytes);
    auto index = [&](long long byte) { return byte >= 0 ? byte / e : -((-byte + e - 1) / e); };
    const long long first = index(firstByte), last = index(lastByte);
    std::string what = a.name + "[" + std::to_string(first) + "]";
    if (last != first) what += " to " + a.name + "[" + std::to_string(last) + "]";
    std::string where;
    if (before) {
        where = -first == 1 ? "one before the start" : plural(-first, "element", "elements") +
                                                           " before the start";
    } else {
        const long long past = first - count + 1;
        where = past == 1 ? "one past the end" : plural(past, "element", "elements") +
                                                     " past the end";
    }
    return what + ", " + where + " of " + a.name + " (" +
           plural(count, "element", "elements") + " of " + std::to_string(a.elementBytes) +
           " bytes, indices 0 to " + std::to_string(count - 1) + ")";
}

}  // namespace

void* allocateDevice(size_t size) {
    const size_t page = pageBytes();
    const size_t body = roundUp(std::max<size_t>(size, 1), 256);
    // [page][guard][body][tail guard .. page boundary][page]
    const size_t front = page + kGuardBytes;
    const size_t tailEnd = roundUp(front + body + kGuardBytes, page);
    const size_t total = tailEnd + page;
    void* m = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return nullptr;
    char* mapping = static_cast<char*>(m);
    mprotect(mapping, page, PROT_NONE);
    mprotect(mapping + tailEnd, page, PROT_NONE);
    char* p = mapping + front;
    std::memset(mapping + page, kGuardByte, kGuardBytes);
    // Device memory starts with garbage on a GPU too: never zeros by luck.
    std::memset(p, 0xcd, size);
    Allocation a;
    a.mapping = mapping;
    a.mappingBytes = total;
    a.size = size;
    a.tailBytes = size_t(mapping + tailEnd - (p + size));
    std::memset(p + size, kGuardByte, a.tailBytes);
    SCANLAB_EMU_POISON(mapping + page, kGuardBytes);
    SCANLAB_EMU_POISON(p + size, a.tailBytes);
    Allocations& all = allocations();
    std::lock_guard<std::mutex> lock(all.m);
    all.live[reinterpret_cast<uintptr_t>(p)] = std::move(a);
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

std::string checkGuards(const char* kernel) {
    Allocations& all = allocations();
    std::lock_guard<std::mutex> lock(all.m);
    const size_t page = pageBytes();
    std::string found;
    for (auto& [base, a] : all.live) {
        char* p = reinterpret_cast<char*>(base);
        char* front = a.mapping + page;
        SCANLAB_EMU_UNPOISON(front, kGuardBytes);
        SCANLAB_EMU_UNPOISON(p + a.size, a.tailBytes);
        const auto [f0, f1] = changedBytes(front, kGuardBytes);
        const auto [t0, t1] = changedBytes(p + a.size, a.tailBytes);
        if (found.empty() && f0 != kGuardBytes) {
            found = describeWrite(a, static_cast<long long>(f0) - static_cast<long long>(kGuardBytes),
                                  static_cast<long long>(f1) - static_cast<long long>(kGuardBytes));
        } else if (found.empty() && t0 != a.tailBytes) {
            found = describeWrite(a, static_cast<long long>(a.size + t0),
                                  static_cast<long long>(a.size + t1));
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

std::string describeDeviceAddress(const void* address) {
    // Called from the fault handler while a kernel runs: no cudaMalloc or cudaFree can
    // run then (launches are synchronous), so the map is read without its lock.
    const uintptr_t u = reinterpret_cast<uintptr_t>(address);
    const Allocations& all = allocations();
    for (const auto& [base, a] : all.live) {
        const uintptr_t start = reinterpret_cast<uintptr_t>(a.mapping);
        if (u < start || u >= start + a.mappingBytes) continue;
        const auto offset = static_cast<long long>(u) - static_cast<long long>(base);
        return describeWrite(a, offset, offset);
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
