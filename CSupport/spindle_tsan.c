// Thread Sanitizer support: in-code suppressions for liburcu internals, and
// the deliberately racy canary helper used by the stress suite.
#include "CSpindle.h"
#include "spindle_internal.h"

bool spindle_tsan_enabled(void) {
#ifdef SPINDLE_TSAN
    return true;
#else
    return false;
#endif
}

// Why a racy function in a library: the stress suite's canary test calls it
// from two threads to prove that TSan is watching (a suite that never reports
// proves nothing). It is never called by the engine.
void spindle_racy_increment(long *counter) {
    long value = *(volatile long *)counter;
    *(volatile long *)counter = value + 1;
}

#ifdef SPINDLE_TSAN
// Why: liburcu's own internals (wfcqueue, wfstack) synchronize through inline
// assembly that TSan cannot see. Our shims annotate the edges they rely on;
// these suppress reports from inside liburcu itself.
const char *__tsan_default_suppressions(void);
const char *__tsan_default_suppressions(void) {
    // And `UnsafeContinuation.resume(returning:)`: a continuation
    // published under a lock (AsyncSpaceWaiters, StateSubscription) can be
    // resumed by another thread before its task has finished suspending;
    // the runtime then hands the task's frame over through its own atomics
    // (the continuation's status word), which TSan cannot see, and reports
    // the resumer's read of the context against the task's next write.
    // (Matched without the mangled names' leading `$`: in a suppression
    // pattern `$` anchors the end.)
    return "race:cds_wfcq\n"
           "race:cds_wfs\n"
           "race:__cds_wfcq\n"
           "race:sScc6resume9returning\n"
           "race:ss22withUnsafeContinuation9isolation\n";
}
#endif
