// scanlab CPU emulator: faults in kernel code.
// (emu_scheduler.h lists the parts.)
#include "emulator/emu_scheduler.h"

namespace scanlab::emu::detail {

namespace {

// ---------------------------------------------------------------------------------
// Faults in kernel code (SIGSEGV/SIGBUS): reported as cudaErrorIllegalAddress.

struct sigaction gPrevSegv, gPrevBus;

thread_local int tlsFaultDepth = 0;

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
        if (addr >= w->sharedEnd && addr < w->sharedEnd + w->pageBytes) {
            std::snprintf(w->faultMessage, sizeof w->faultMessage,
                          "out-of-bounds access to dynamic shared memory in block %s by thread "
                          "%s: byte %zu of a %zu-byte allocation (the launch asked for %zu "
                          "bytes)",
                          block, thread, size_t(addr - (w->sharedEnd - shBytes)), shBytes,
                          w->launch->sharedBytes);
        } else if (addr >= stackGuard && addr < stackGuard + w->pageBytes) {
            std::snprintf(w->faultMessage, sizeof w->faultMessage,
                          "stack overflow in block %s, thread %s: each emulated thread has %zu "
                          "KiB of stack (set SCANLAB_EMU_STACK_KB for more)",
                          block, thread, w->stackBytes / 1024);
        } else if (const std::string element = describeDeviceAddress(addr); !element.empty()) {
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
    const struct sigaction& prev = sig == SIGBUS ? gPrevBus : gPrevSegv;
    if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction != nullptr) {
        prev.sa_sigaction(sig, info, uctx);
        return;
    }
    if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN && prev.sa_handler != nullptr) {
        prev.sa_handler(sig);
        return;
    }
    signal(sig, SIG_DFL);  // returning re-runs the access: the default action
}

}  // namespace

void installFaultHandler() {
    if (!config().catchFaults) return;
    for (int sig : {SIGSEGV, SIGBUS}) {
        struct sigaction cur{};
        sigaction(sig, nullptr, &cur);
        if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == faultHandler) continue;
        struct sigaction sa{};
        sa.sa_sigaction = faultHandler;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        sigaction(sig, &sa, sig == SIGBUS ? &gPrevBus : &gPrevSegv);
    }
}

}  // namespace scanlab::emu::detail
