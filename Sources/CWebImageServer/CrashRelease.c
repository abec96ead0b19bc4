#include "CWebImageServer.h"

#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

// Everything the handler touches is static and written before the handlers are installed: a
// signal handler may only call async-signal-safe functions (close is one), so it lives in C.
#define CWI_MAXIMUM_DESCRIPTORS 16
static const int crash_signals[] = {SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP};
#define CWI_SIGNAL_COUNT (sizeof(crash_signals) / sizeof(crash_signals[0]))

static atomic_int descriptors[CWI_MAXIMUM_DESCRIPTORS];
static atomic_int descriptor_count;
static struct sigaction previous[CWI_SIGNAL_COUNT];
static atomic_int installed;

static void release_then_chain(int signal_number, siginfo_t *info, void *context) {
    int count = atomic_load(&descriptor_count);
    for (int index = 0; index < count && index < CWI_MAXIMUM_DESCRIPTORS; index++) {
        int descriptor = atomic_exchange(&descriptors[index], -1);
        if (descriptor >= 0) close(descriptor);
    }
    for (size_t index = 0; index < CWI_SIGNAL_COUNT; index++) {
        if (crash_signals[index] != signal_number) continue;
        struct sigaction *before = &previous[index];
        if (before->sa_flags & SA_SIGINFO) {
            if (before->sa_sigaction) {
                before->sa_sigaction(signal_number, info, context);
                return;
            }
        } else if (before->sa_handler != SIG_IGN && before->sa_handler != SIG_DFL && before->sa_handler) {
            before->sa_handler(signal_number);
            return;
        }
        // No handler before: the default action, which ends the process (and dumps core).
        sigaction(signal_number, before, NULL);
        raise(signal_number);
        return;
    }
}

int cwi_close_on_crash(int descriptor) {
    int index = atomic_fetch_add(&descriptor_count, 1);
    if (index >= CWI_MAXIMUM_DESCRIPTORS) return -1;
    atomic_store(&descriptors[index], descriptor);
    if (atomic_exchange(&installed, 1)) return 0;
    for (size_t signal_index = 0; signal_index < CWI_SIGNAL_COUNT; signal_index++) {
        struct sigaction action;
        memset(&action, 0, sizeof(action));
        action.sa_sigaction = release_then_chain;
        // SA_ONSTACK: Swift's reporter runs on an alternate stack, so a stack overflow can reach it.
        action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
        sigfillset(&action.sa_mask);
        if (sigaction(crash_signals[signal_index], &action, &previous[signal_index]) != 0) return -1;
    }
    return 0;
}
