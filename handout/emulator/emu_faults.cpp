// scanlab CPU emulator: faults in kernel code.
// (emu_scheduler.h lists the parts.)
#include <execinfo.h>
#include <ucontext.h>

#include "emulator/emu_scheduler.h"

namespace scanlab::emu::detail {

namespace {

// ---------------------------------------------------------------------------------
// Faults in kernel code: SIGSEGV/SIGBUS are reported as cudaErrorIllegalAddress, SIGFPE
// (an integer division by zero) as cudaErrorLaunchFailure, SIGABRT (assert()) as
// cudaErrorAssert; each with the student's line (runBlock).

struct sigaction gPrevSegv, gPrevBus, gPrevFpe, gPrevAbrt;

struct sigaction& previousAction(int sig) {
    switch (sig) {
        case SIGBUS: return gPrevBus;
        case SIGFPE: return gPrevFpe;
        case SIGABRT: return gPrevAbrt;
        default: return gPrevSegv;
    }
}

thread_local int tlsFaultDepth = 0;

// The instruction the signal interrupted.
const void* interruptedPc(void* uctx) {
    const auto* uc = static_cast<const ucontext_t*>(uctx);
#if defined(__x86_64__)
    return reinterpret_cast<const void*>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
    return reinterpret_cast<const void*>(uc->uc_mcontext.pc);
#else
    (void)uc;
    return nullptr;
#endif
}

// The faulting thread's call stack, the interrupted instruction first (its return
// addresses after it), for the student's line (runBlock). Unwound from the handler
// through the signal frame; where that fails, the instruction alone.
void recordFaultStack(Worker& w, void* uctx) {
    const void* pc = interruptedPc(uctx);
    w.faultDepth = 0;
    if (pc == nullptr) return;
    void* frames[Worker::kFaultFrames];
    const int n = backtrace(frames, Worker::kFaultFrames);
    int at = 0;
    while (at < n && frames[at] != pc) ++at;
    w.faultPcs[w.faultDepth++] = pc;
    for (int k = at + 1; k < n && w.faultDepth < Worker::kFaultFrames; ++k)
        w.faultPcs[w.faultDepth++] = frames[k];
}

void faultHandler(int sig, siginfo_t* info, void* uctx) {
    if (tlsFaultDepth++ > 0) {
        // A fault while handling one (the emulator's own state is damaged, e.g. by a
        // kernel writing far past a __shared__ array): crash with the default action.
        signal(sig, SIG_DFL);
        return;
    }
    Worker* w = tlsWorker;
    if (w != nullptr && w->current != nullptr && w->launch != nullptr && !w->failed) {
        Thread* t = w->current;
        char* addr = static_cast<char*>(info->si_addr);
        const size_t shBytes = (w->launch->sharedBytes + 15) & ~size_t(15);
        char* stackGuard = w->stackGuards[t->linear];
        char thread[64];
        std::snprintf(thread, sizeof thread, "(%u,%u,%u)", t->idx.x, t->idx.y, t->idx.z);
        char block[64];
        std::snprintf(block, sizeof block, "(%u,%u,%u)", tlsBuiltins.bIdx.x,
                      tlsBuiltins.bIdx.y, tlsBuiltins.bIdx.z);
        const bool stackOverflow = (sig == SIGSEGV || sig == SIGBUS) && addr >= stackGuard &&
                                   addr < stackGuard + w->pageBytes;
        w->faultCode = cudaErrorIllegalAddress;
        if (!stackOverflow) recordFaultStack(*w, uctx);  // no unwinding off a full stack
        if (sig == SIGFPE) {
            w->faultCode = cudaErrorLaunchFailure;
            std::snprintf(w->faultMessage, sizeof w->faultMessage,
                          "arithmetic fault in block %s by thread %s: %s", block, thread,
                          info->si_code == FPE_INTDIV
                              ? "integer division by zero (or of the lowest value by -1); on a "
                                "GPU the result is undefined, not a fault"
                              : "a floating-point or integer exception (SIGFPE)");
        } else if (sig == SIGABRT) {
            w->faultCode = cudaErrorAssert;
            std::snprintf(w->faultMessage, sizeof w->faultMessage,
                          "abort() in block %s by thread %s (a failed assert() prints its "
                          "condition above)",
                          block, thread);
        } else if (addr >= w->sharedEnd && addr < w->sharedEnd + w->pageBytes) {
            std::snprintf(w->faultMessage, sizeof w->faultMessage,
                          "out-of-bounds access to dynamic shared memory in block %s by thread "
                          "%s: byte %zu of a %zu-byte allocation (the launch asked for %zu "
                          "bytes)",
                          block, thread, size_t(addr - (w->sharedEnd - shBytes)), shBytes,
                          w->launch->sharedBytes);
        } else if (stackOverflow) {
            std::snprintf(w->faultMessage, sizeof w->faultMessage,
                          "stack overflow in block %s, thread %s: each emulated thread has %zu "
                          "KiB of stack (set SCANLAB_EMU_STACK_KB for more)",
                          block, thread, w->stackBytes / 1024);
        } else if (const std::string element = describeDeviceAddress(addr, w->launch->arguments); !element.empty()) {
            std::snprintf(w->faultMessage, sizeof w->faultMessage,
                          "illegal memory access in block %s by thread %s: %s", block, thread,
                          element.c_str());
        } else {
            std::snprintf(w->faultMessage, sizeof w->faultMessage,
                          "illegal memory access in block %s by thread %s at address %p "
                          "(an index out of bounds, or a bad pointer)",
                          block, thread, static_cast<void*>(addr));
        }
        // Leave the handler for the scheduler; the faulting fiber is abandoned.
        // SA_NODEFER keeps the signal unblocked afterwards.
        w->current = nullptr;
        tlsFaultDepth = 0;
#ifdef SCANLAB_EMU_ASAN
        asanStartSwitch(*w, nullptr, nullptr);
#endif
        bctx::jump_fcontext(w->schedCtx, nullptr);
    }
    tlsFaultDepth = 0;
    // Not a kernel fault: hand it to whoever handled it before, else crash.
    const struct sigaction& prev = previousAction(sig);
    if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction != nullptr) {
        prev.sa_sigaction(sig, info, uctx);
        return;
    }
    if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN && prev.sa_handler != nullptr) {
        prev.sa_handler(sig);
        return;
    }
    // Returning re-runs the access with the default action (abort() raises again).
    signal(sig, SIG_DFL);
}

}  // namespace

void installFaultHandler() {
    if (!config().catchFaults) return;
    // The first backtrace() loads the unwinder: here, not in a signal handler.
    static const int unwinderLoaded = [] {
        void* frame[1];
        return backtrace(frame, 1);
    }();
    (void)unwinderLoaded;
    // SIGABRT: abort() in kernel code (a failed assert()), cudaErrorAssert as on a GPU.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGABRT}) {
        struct sigaction cur{};
        sigaction(sig, nullptr, &cur);
        if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == faultHandler) continue;
        struct sigaction sa{};
        sa.sa_sigaction = faultHandler;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        sigaction(sig, &sa, &previousAction(sig));
    }
}

}  // namespace scanlab::emu::detail
