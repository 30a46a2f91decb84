// Process-wide diagnostics counters (leak checks); off the per-event path.
#include <stdatomic.h>

#include "CSpindle.h"
#include "spindle_internal.h"

static _Atomic long live_queues = 0;

void spindle_live_queues_add(long delta) {
    atomic_fetch_add_explicit(&live_queues, delta, memory_order_relaxed);
}

long spindle_live_queues(void) {
    return atomic_load_explicit(&live_queues, memory_order_relaxed);
}
