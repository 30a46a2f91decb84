// The emit gate on liburcu's "bulletproof" RCU flavor (urcu-bp).
//
// Why RCU: every emit must either see that the loop is closed, or be
// finished enqueuing before stop's final drain. A shared in-flight counter
// does that with one locked read-modify-write per emit, on a line every
// producer writes. An RCU read-side section costs a
// thread-local store and a compiler barrier instead: urcu-bp moves the
// memory barrier to the rare writer (sys_membarrier), and registers threads
// on their first use and unregisters them at exit, so any thread may emit.
//
// The function-call API (no _LGPL_SOURCE): liburcu stays dynamically linked.
#include <urcu/urcu-bp.h>

#include "CSpindle.h"
#include "spindle_internal.h"

void spindle_gate_enter(void) { urcu_bp_read_lock(); }

void spindle_gate_exit(void) { urcu_bp_read_unlock(); }

void spindle_gate_wait_for_emitters(void) { urcu_bp_synchronize_rcu(); }
