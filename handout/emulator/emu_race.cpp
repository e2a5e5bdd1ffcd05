// scanlab CPU emulator: the race check of shared memory (emu_race.h). Each word of a
// worker's shared memory has a record of its last write and its last two readers: the
// thread, the block's and the warp's synchronization counts at the time, the
// instruction. An access by another thread with no synchronization counted since is a race.
#include "emulator/emu_race.h"

#include <cxxabi.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "emulator/emu_bounds.h"
#include "emulator/emu_scheduler.h"

namespace scanlab::emu::detail {

thread_local SCANLAB_EMU_CONSTINIT RaceRanges tlsRaceRanges{};

namespace {

// One access of a word, 16 bytes: `gen` says which block on the worker made it (0: none).
struct Access {
    uint32_t gen = 0;
    uint32_t blockEpoch = 0;   // the block's barriers, atomics and fences before it
    uint16_t warpEpoch = 0;    // the warp's warp operations before it (modulo 2^16, below)
    uint16_t threadBytes = 0;  // linear thread index in the block << 4 | the word's bytes
    int32_t pc = 0;            // the instruction, from kPcUnknown's base (pcOffset)
    unsigned thread() const { return threadBytes >> 4u; }
    unsigned bytes() const { return threadBytes & 15u; }
};

struct Cell {
    Access write;
    Access reads[2];
};

constexpr unsigned kMaxWarps = kMaxThreadsPerBlock / 32;
constexpr int32_t kPcUnknown = INT32_MIN;

// The running block's synchronization counts and the record of every shared word.
struct Shadow {
    uint32_t gen = 0;
    uint32_t blockEpoch = 0;
    uint32_t warpEpoch[kMaxWarps] = {};
    RaceRanges ranges;        // this worker's shared memory, found at its first checked block
    std::vector<Cell> cells;  // the thread-local block's words, then dynamic shared memory's
};
// The worker's record: the hooks reach it through a plain pointer (no thread-local
// initialization to test on every access); the owner frees it when the thread ends.
thread_local SCANLAB_EMU_CONSTINIT Shadow* tlsShadow = nullptr;
thread_local std::unique_ptr<Shadow> tlsShadowOwner;

// Instructions as 32-bit offsets from one of this program's own (the student's code is
// linked into the same program).
uintptr_t pcBase() { return reinterpret_cast<uintptr_t>(&raceAccessSlow); }
int32_t pcOffset(const void* pc) {
    const auto d = static_cast<intptr_t>(reinterpret_cast<uintptr_t>(pc) - pcBase());
    return d > INT32_MIN && d <= INT32_MAX ? int32_t(d) : kPcUnknown;
}
const void* pcOf(int32_t offset) {
    return offset == kPcUnknown
               ? nullptr
               : reinterpret_cast<const void*>(pcBase() + uintptr_t(intptr_t(offset)));
}

enum class RaceKind { ReadAfterWrite, WriteAfterRead, WriteAfterWrite };

struct RaceRecord {
    bool found = false;
    RaceKind kind{};
    std::string kernel;
    uint3 block{}, earlier{}, later{};
    bool sameWarp = false;
    unsigned earlierWarp = 0, laterWarp = 0;
    const void* earlierPc = nullptr;
    const void* laterPc = nullptr;
    std::string where;
};

std::atomic<bool> gActive{false};
std::atomic<bool> gEnabled{false};
std::atomic<bool> gFound{false};
std::mutex gRaceMutex;
RaceRecord gRace;  // guarded by gRaceMutex

struct TlsQuery {
    uintptr_t lo = 0, span = 0;
};

// The calling thread's copy of the program's own thread-local block (its __shared__
// variables, on the emulator): the first module of the list is the executable.
int findProgramTls(dl_phdr_info* info, size_t, void* data) {
    auto* q = static_cast<TlsQuery*>(data);
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        if (info->dlpi_phdr[i].p_type == PT_TLS && info->dlpi_tls_data != nullptr) {
            q->lo = reinterpret_cast<uintptr_t>(info->dlpi_tls_data);
            q->span = info->dlpi_phdr[i].p_memsz;
        }
    }
    return 1;
}

// The program's thread-local variable (a static __shared__ one, on the emulator) holding
// byte `offset` of its thread-local block: from the program's symbol table, whose TLS
// symbols give their offsets in that block. "" when not found (a stripped program).
std::string sharedVariableAt(uintptr_t offset, size_t* byteInIt) {
    const int fd = open("/proc/self/exe", O_RDONLY);
    if (fd < 0) return "";
    struct stat st {};
    void* map = fstat(fd, &st) == 0
                    ? mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0)
                    : MAP_FAILED;
    close(fd);
    if (map == MAP_FAILED) return "";
    const auto* base = static_cast<const char*>(map);
    const auto* header = reinterpret_cast<const ElfW(Ehdr)*>(base);
    const auto* sections = reinterpret_cast<const ElfW(Shdr)*>(base + header->e_shoff);
    std::string name;
    for (unsigned i = 0; i < header->e_shnum && name.empty(); ++i) {
        if (sections[i].sh_type != SHT_SYMTAB) continue;
        const char* names = base + sections[sections[i].sh_link].sh_offset;
        const auto* symbols = reinterpret_cast<const ElfW(Sym)*>(base + sections[i].sh_offset);
        for (size_t k = 0; k < sections[i].sh_size / sizeof(ElfW(Sym)); ++k) {
            const ElfW(Sym)& sym = symbols[k];
            if (ELF64_ST_TYPE(sym.st_info) != STT_TLS || sym.st_shndx == SHN_UNDEF) continue;
            if (offset < sym.st_value || offset >= sym.st_value + std::max<size_t>(sym.st_size, 1))
                continue;
            name = names + sym.st_name;
            *byteInIt = offset - sym.st_value;
            break;
        }
    }
    munmap(map, size_t(st.st_size));
    int status = 0;
    if (char* readable = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status)) {
        name = readable;
        std::free(readable);
    }
    return name;
}

std::string describeShared(uintptr_t address) {
    const RaceRanges& r = tlsRaceRanges;
    const auto dyn = reinterpret_cast<uintptr_t>(tlsBuiltins.dynamicShared);
    const Launch* L = tlsWorker->launch;
    if (L != nullptr && address >= dyn && address < dyn + L->sharedBytes)
        return "byte " + std::to_string(address - dyn) + " of dynamic shared memory";
    if (address - r.tlsLo < r.tlsSpan) {
        size_t byte = 0;
        const std::string name = sharedVariableAt(address - r.tlsLo, &byte);
        if (!name.empty()) return "byte " + std::to_string(byte) + " of __shared__ " + name;
        return "byte " + std::to_string(address - r.tlsLo) + " of the static __shared__ variables";
    }
    return "byte " + std::to_string(address - r.dynLo) + " of shared memory";
}

[[gnu::cold, gnu::noinline]] void recordRace(Worker& w, RaceKind kind, const Access& earlier,
                                             const Access& later, uintptr_t address) {
    std::lock_guard<std::mutex> lock(gRaceMutex);
    if (gRace.found) return;
    gRace.found = true;
    gFound.store(true, std::memory_order_relaxed);
    gRace.kind = kind;
    gRace.kernel = w.launch->name;
    gRace.block = tlsBuiltins.bIdx;
    gRace.earlier = w.threads[earlier.thread()].idx;
    gRace.later = w.threads[later.thread()].idx;
    gRace.earlierWarp = earlier.thread() / 32u;
    gRace.laterWarp = later.thread() / 32u;
    gRace.sameWarp = gRace.earlierWarp == gRace.laterWarp;
    gRace.earlierPc = pcOf(earlier.pc);
    gRace.laterPc = pcOf(later.pc);
    gRace.where = describeShared(address);
}

// Whether `before` happened before `now` (the current access): a barrier of the block,
// an atomic or fence of any of its threads, or (same warp) a warp operation since.
inline bool ordered(const Access& before, const Access& now) {
    return now.blockEpoch != before.blockEpoch ||
           (before.thread() / 32u == now.thread() / 32u && now.warpEpoch != before.warpEpoch);
}

inline bool conflicts(const Access& a, const Access& now) {
    return a.gen == now.gen && a.thread() != now.thread() && (a.bytes() & now.bytes()) != 0 &&
           !ordered(a, now);
}

}  // namespace

void raceBlockStart(Worker& w) {
    RaceRanges& r = tlsRaceRanges;
    if (!gActive.load(std::memory_order_relaxed) || !gEnabled.load(std::memory_order_relaxed)) {
        r = RaceRanges{};  // the hooks' range test fails: nothing is recorded
        return;
    }
    if (tlsShadow == nullptr) {
        tlsShadowOwner = std::make_unique<Shadow>();
        tlsShadow = tlsShadowOwner.get();
        TlsQuery q;
        dl_iterate_phdr(findProgramTls, &q);
        Shadow& s = *tlsShadow;
        s.ranges.tlsLo = q.lo;
        s.ranges.tlsSpan = q.span;
        s.ranges.dynLo = reinterpret_cast<uintptr_t>(w.sharedEnd) - kMaxDynamicShared;
        s.ranges.dynSpan = kMaxDynamicShared;
        s.cells.resize((q.span + 3) / 4 + kMaxDynamicShared / 4);
    }
    Shadow& s = *tlsShadow;
    r = s.ranges;
    if (++s.gen == 0) {  // wrapped: forget every record
        for (Cell& c : s.cells) c = Cell{};
        s.gen = 1;
    }
    s.blockEpoch = 0;
    for (uint32_t& e : s.warpEpoch) e = 0;
}

void raceBarrier(Worker&) {
    if (tlsShadow != nullptr) ++tlsShadow->blockEpoch;
}

// Accesses keep the warp's count modulo 2^16: where it wraps, the block's count moves on,
// so two counts that differ are never taken for one (which could make up a race).
void raceWarpSync(Worker&, unsigned warp) {
    Shadow* s = tlsShadow;
    if (s != nullptr && (++s->warpEpoch[warp % kMaxWarps] & 0xffffu) == 0) ++s->blockEpoch;
}

void raceAtomic() {
    const Worker* w = tlsWorker;
    if (tlsShadow != nullptr && w != nullptr && w->current != nullptr) ++tlsShadow->blockEpoch;
}

void raceAccessSlow(uintptr_t address, size_t bytes, bool write, const void* pc) {
    Worker* w = tlsWorker;
    if (w == nullptr || w->current == nullptr || w->launch == nullptr || w->failed) return;
    // The emulator's own per-worker variables (threadIdx, ...) share the thread-local block.
    const auto builtins = reinterpret_cast<uintptr_t>(&tlsBuiltins);
    if (address >= builtins && address < builtins + sizeof(Builtins)) return;
    Shadow& s = *tlsShadow;  // set: the ranges are
    const RaceRanges& r = tlsRaceRanges;
    const size_t tlsWords = (r.tlsSpan + 3) / 4;
    Access now;
    now.gen = s.gen;
    now.blockEpoch = s.blockEpoch;
    const unsigned thread = w->current->linear;
    now.warpEpoch = uint16_t(s.warpEpoch[(thread / 32u) % kMaxWarps]);
    now.pc = pcOffset(pc);
    const bool report = !gFound.load(std::memory_order_relaxed);
    for (uintptr_t at = address & ~uintptr_t(3); at < address + bytes; at += 4) {
        const uintptr_t lo = std::max(at, address), hi = std::min(at + 4, address + bytes);
        now.threadBytes = uint16_t(thread << 4u | (((1u << (hi - lo)) - 1) << (lo - at)));
        size_t index;
        if (at - r.tlsLo < r.tlsSpan)
            index = (at - r.tlsLo) / 4;
        else if (at - r.dynLo < r.dynSpan)
            index = tlsWords + (at - r.dynLo) / 4;
        else
            continue;
        Cell& c = s.cells[index];
        if (write) {
            if (report && conflicts(c.write, now))
                recordRace(*w, RaceKind::WriteAfterWrite, c.write, now, lo);
            for (const Access& read : c.reads) {
                if (report && conflicts(read, now))
                    recordRace(*w, RaceKind::WriteAfterRead, read, now, lo);
            }
            c.write = now;
            c.reads[0].gen = c.reads[1].gen = 0;
        } else {
            if (report && conflicts(c.write, now))
                recordRace(*w, RaceKind::ReadAfterWrite, c.write, now, lo);
            // This thread's slot, else a free one, else the second: a reader forgotten
            // can only hide a race, never make one up.
            Access* slot = &c.reads[1];
            for (Access& read : c.reads) {
                if (read.gen != now.gen || read.thread() == thread) {
                    slot = &read;
                    break;
                }
            }
            *slot = now;
        }
    }
}

}  // namespace scanlab::emu::detail

namespace scanlab::emu {

namespace detail {
void raceMarkActive() { gActive.store(true, std::memory_order_relaxed); }
}  // namespace detail

bool raceCheckActive() { return detail::gActive.load(std::memory_order_relaxed); }

bool setRaceCheck(bool on) { return detail::gEnabled.exchange(on); }

void clearRaces() {
    std::lock_guard<std::mutex> lock(detail::gRaceMutex);
    detail::gRace = detail::RaceRecord{};
    detail::gFound.store(false, std::memory_order_relaxed);
}

std::string firstRace() {
    using detail::RaceKind;
    detail::RaceRecord r;
    {
        std::lock_guard<std::mutex> lock(detail::gRaceMutex);
        r = detail::gRace;
    }
    if (!r.found) return "";
    auto line = [](const void* pc) {
        const std::string at = detail::describeCodeAddress(pc);
        return at.empty() ? std::string("an unknown line") : at;
    };
    const char* earlierVerb = r.kind == RaceKind::WriteAfterRead ? "read" : "wrote";
    const char* laterVerb = r.kind == RaceKind::ReadAfterWrite ? "read" : "wrote";
    const char* kind = r.kind == RaceKind::ReadAfterWrite   ? "read-after-write"
                       : r.kind == RaceKind::WriteAfterRead ? "write-after-read"
                                                            : "write-after-write";
    const char* barrier = r.sameWarp ? "__syncwarp()" : "__syncthreads()";
    const std::string between = r.sameWarp ? "lanes of warp " + std::to_string(r.earlierWarp)
                                           : "warps " + std::to_string(r.earlierWarp) + " and " +
                                                 std::to_string(r.laterWarp);
    return std::string("a ") + kind + " race on shared memory in kernel " + r.kernel + ", block " +
           detail::fmtDim(r.block) + ": thread " + detail::fmtDim(r.earlier) + " " + earlierVerb +
           " " + r.where + " at " + line(r.earlierPc) + ", then thread " + detail::fmtDim(r.later) +
           " " + laterVerb + " it at " + line(r.laterPc) + " (" + between +
           ") with no synchronization between them: likely a missing " + barrier +
           " between those two lines";
}

}  // namespace scanlab::emu
