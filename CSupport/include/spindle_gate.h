// CSpindle: Emit gate (liburcu urcu-bp read-side sections).
// One part of the module: CSpindle.h includes every part and gives the
// overview and the naming ladder.
#ifndef SPINDLE_GATE_H
#define SPINDLE_GATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// MARK: - Emit gate (liburcu urcu-bp read-side sections)

/// Enters an emit: a read-side critical section of liburcu's bulletproof RCU
/// flavor (registers the calling thread on first use). Must be paired with
/// `spindle_gate_exit` on the same thread, must not block in between, and
/// may nest. Any thread. Costs a thread-local store and a compiler barrier
/// when the kernel has membarrier (otherwise a full fence).
void spindle_gate_enter(void);

/// Leaves the section entered by `spindle_gate_enter`.
void spindle_gate_exit(void);

/// Returns once every gate section that was open when it was called has
/// exited (an RCU grace period); sections entered afterwards see every write
/// the caller made before the call. Must not be called inside a section.
/// Blocks (microseconds when idle; liburcu sleeps 10 ms per round while a
/// section stays open).
void spindle_gate_wait_for_emitters(void);

#ifdef __cplusplus
}
#endif

#endif // SPINDLE_GATE_H
