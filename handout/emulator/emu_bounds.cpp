// scanlab CPU emulator: the bounds check of every global-memory access (emu_bounds.h),
// and the source line of an access, from the student unit's line tables.
#include "emulator/emu_bounds.h"

#include <link.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstring>
#include <map>

#include "emulator/emu_scheduler.h"

extern char** environ;

namespace scanlab::emu::detail {

thread_local SCANLAB_EMU_CONSTINIT BoundsCache tlsBounds{};

namespace {

// Stops the running thread's block: `bytes` at `address` are outside the allocation whose
// reserved stretch holds them. The line is added by runBlock (describeCodeAddress), on
// the worker's own stack rather than the abandoned fiber's.
[[noreturn, gnu::cold, gnu::noinline]] void outOfBounds(Worker& w, uintptr_t address, size_t bytes,
                                                      bool write, const void* pc) {
    Thread* self = w.current;
    {
        const std::string detail = threadName(*self) + (write ? " wrote " : " read ") +
                                   describeDeviceAccess(address, bytes, w.launch->arguments);
        recordFailure(w, write ? "out-of-bounds write" : "out-of-bounds read", detail, -1,
                      cudaErrorIllegalAddress);
    }
    w.accessPc = pc;
    abandon(w, self);
}

}  // namespace

void checkAccessSlow(uintptr_t address, size_t bytes, bool write, const void* pc) {
    Worker* w = tlsWorker;
    // Host code of the student unit, or a block already failing: nothing to check.
    if (w == nullptr || w->current == nullptr || w->launch == nullptr || w->failed) return;
    const std::vector<DeviceStretch>& all = deviceStretches();
    auto next = std::upper_bound(all.begin(), all.end(), address,
                                 [](uintptr_t a, const DeviceStretch& s) { return a < s.mapLo; });
    uintptr_t otherLo = 0, otherHi = next == all.end() ? UINTPTR_MAX : next->mapLo;
    if (next != all.begin()) {
        const DeviceStretch& s = *std::prev(next);
        if (address < s.mapHi) {
            if (address >= s.lo && address + bytes <= s.hi) {
                tlsBounds.bodyLo = s.lo;
                tlsBounds.bodyHi = s.hi;
                return;
            }
            outOfBounds(*w, address, bytes, write, pc);
        }
        otherLo = s.mapHi;
    }
    // Not device memory (a stack, shared memory, ...): remembered, so that the next
    // access there costs two comparisons.
    if (address + bytes <= otherHi) {
        BoundsCache& c = tlsBounds;
        c.otherLo[c.nextOther] = otherLo;
        c.otherHi[c.nextOther] = otherHi;
        c.nextOther ^= 1;
    }
}

namespace {

bool endsWith(const std::string& s, const char* tail) {
    const size_t n = std::strlen(tail);
    return s.size() >= n && s.compare(s.size() - n, n, tail) == 0;
}

struct ModuleQuery {
    uintptr_t pc = 0;
    std::string file;
    uintptr_t bias = 0;
    bool found = false;
    bool program = false;  // the executable itself, not a shared library
};

int findModule(dl_phdr_info* info, size_t, void* data) {
    auto* q = static_cast<ModuleQuery*>(data);
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_LOAD) continue;
        const uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
        if (q->pc < lo || q->pc >= lo + ph.p_memsz) continue;
        q->file = info->dlpi_name != nullptr ? info->dlpi_name : "";
        q->program = q->file.empty();
        if (q->file.empty()) {  // the program itself: its path (addr2line's /proc/self is its own)
            char path[4096];
            const ssize_t k = readlink("/proc/self/exe", path, sizeof path - 1);
            if (k > 0) q->file.assign(path, size_t(k));
        }
        q->bias = info->dlpi_addr;
        q->found = true;
        return 1;
    }
    return 0;
}

// addr2line's answer for `address` of `file`: "file:line" per line, the innermost
// inlined frame first; "" when it cannot run. Buffers on the heap: it may run on a
// fiber's small stack (a message built where the thread fails).
std::string runAddr2line(const std::string& file, uintptr_t address) {
    int out[2];
    if (pipe(out) != 0) return "";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::string hex(32, '\0');
    hex.resize(size_t(std::snprintf(hex.data(), hex.size(), "0x%zx", size_t(address))));
    std::string exe = file;
    std::string arg0 = "addr2line", e = "-e", inl = "-i";
    char* argv[] = {arg0.data(), e.data(), exe.data(), inl.data(), hex.data(), nullptr};
    pid_t pid = 0;
    const int spawned = posix_spawnp(&pid, "addr2line", &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    std::string text;
    if (spawned == 0) {
        std::vector<char> buf(4096);
        for (ssize_t k; (k = read(out[0], buf.data(), buf.size())) > 0;) text.append(buf.data(), size_t(k));
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) text.clear();
    }
    close(out[0]);
    return text;
}

// The course's own code, not the student's: the harness, the emulator (its headers
// and its library) and the system's headers.
bool isCourseFile(const std::string& file) {
    return file.find("/harness/") != std::string::npos ||
           file.find("/emulator/cuda_emu") != std::string::npos ||
           file.find("/emulator/emu_") != std::string::npos || file.rfind("/usr/", 0) == 0;
}

// "student/scan.cuh:57": the last two components of a path, with the line.
std::string shortFrame(const std::string& frame) {
    const size_t last = frame.find_last_of('/');
    if (last == std::string::npos || last == 0) return frame;
    const size_t prev = frame.find_last_of('/', last - 1);
    return prev == std::string::npos ? frame : frame.substr(prev + 1);
}

// The source frames of one instruction ("path:line", the innermost inlined one first),
// from addr2line and the program's line tables; none where it has none (code built
// without -g) or the instruction is in a shared library (the C library's abort(), which
// may have line tables too): the student's code is always linked into the program.
std::vector<std::string> sourceFrames(uintptr_t instruction) {
    ModuleQuery q;
    q.pc = instruction;
    dl_iterate_phdr(findModule, &q);
    std::vector<std::string> frames;
    if (!q.found || !q.program || q.file.empty()) return frames;
    const std::string text = runAddr2line(q.file, q.pc - q.bias);
    size_t at = 0;
    while (at < text.size()) {
        size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(at, end - at);
        at = end + 1;
        if (const size_t space = line.find(' '); space != std::string::npos) line.resize(space);
        if (line.empty() || line.rfind("??", 0) == 0 || endsWith(line, ":0") || endsWith(line, ":?"))
            continue;
        frames.push_back(line);
    }
    return frames;
}

// The frames of `pcs` (innermost call first), each looked up once per program.
std::vector<std::string> stackFrames(const void* const* pcs, size_t count, bool firstIsExact) {
    static std::mutex m;
    static std::map<uintptr_t, std::vector<std::string>> known;
    std::lock_guard<std::mutex> lock(m);
    std::vector<std::string> frames;
    for (size_t i = 0; i < count; ++i) {
        // A return address is just after its call: look up the call itself.
        const uintptr_t instruction =
            reinterpret_cast<uintptr_t>(pcs[i]) - (i == 0 && firstIsExact ? 0 : 1);
        auto it = known.find(instruction);
        if (it == known.end()) it = known.emplace(instruction, sourceFrames(instruction)).first;
        frames.insert(frames.end(), it->second.begin(), it->second.end());
    }
    return frames;
}

// The innermost frame in the student's files, then the innermost harness frame inside
// it: "student/scan.cuh:80 (in harness/tile_io.cuh:52)"; "" when there is no student frame.
std::string studentFrame(const std::vector<std::string>& frames) {
    size_t student = 0;
    while (student < frames.size() && isCourseFile(frames[student])) ++student;
    if (student == frames.size()) return "";
    for (size_t k = 0; k < student; ++k) {
        if (frames[k].find("/harness/") != std::string::npos)
            return shortFrame(frames[student]) + " (in " + shortFrame(frames[k]) + ")";
    }
    return shortFrame(frames[student]);
}

}  // namespace

std::string describeCodeAddress(const void* pc) {
    const std::vector<std::string> frames = stackFrames(&pc, 1, false);
    if (frames.empty()) return "";
    const std::string student = studentFrame(frames);
    return student.empty() ? shortFrame(frames[0]) : student;
}

std::string describeStudentCode(const void* const* pcs, size_t count, bool firstIsExact) {
    return studentFrame(stackFrames(pcs, count, firstIsExact));
}

}  // namespace scanlab::emu::detail
