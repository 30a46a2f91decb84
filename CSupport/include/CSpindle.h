// CSpindle: the C half of Spindle's engine.
//
// The module's umbrella: one header per subsystem, included below. The
// structures are behind opaque pointers so that Swift never sees liburcu's
// types (its transparent-union arguments cannot be called from Swift; every
// liburcu call is wrapped in a plain-pointer shim). The three structures:
//
//   spindle_wfq_*     unbounded MPSC event queue on liburcu's wait-free
//                     concurrent queue (wfcqueue), with pooled nodes that carry
//                     the Swift payload inline (no allocation per event in
//                     steady state).
//   spindle_lane_*    per-producer SPSC lanes in linked blocks, the threads'
//                     tables of them and the runner's set (LANES.md).
//   spindle_parker_*  an event count on a futex: a thread spins briefly, then
//                     sleeps until another thread notifies.
//
// Naming follows liburcu's ladder: a plain name is safe from any thread; a
// `_consumer` name must only be called by the single consumer thread.
#ifndef CSPINDLE_H
#define CSPINDLE_H

// One header per subsystem:
#include "spindle_wfq.h"  // Unbounded wait-free MPSC queue (liburcu wfcqueue)
#include "spindle_parker.h"  // Parker (event count on a futex)
#include "spindle_tsan.h"  // Thread Sanitizer support
#include "spindle_prefetch.h"  // Cache prefetch hints (the atoms graph)
#include "spindle_gate.h"  // Emit gate (liburcu urcu-bp read-side sections)
#include "spindle_sched.h"  // Scheduling (executors' ready queue, per-loop task node)
#include "spindle_lane.h"  // Per-producer lanes (SPSC, linked blocks)
#include "spindle_diagnostics.h"  // Diagnostics

#endif // CSPINDLE_H
