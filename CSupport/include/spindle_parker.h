// CSpindle: Parker (event count on a futex).
// One part of the module: CSpindle.h includes every part and gives the
// overview and the naming ladder.
#ifndef SPINDLE_PARKER_H
#define SPINDLE_PARKER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// MARK: - Parker (event count on a futex)

/// An event count: threads wait for a condition that other threads make true
/// and then notify. Any number of waiters and notifiers.
///
/// Protocol (waiter): `key = spindle_parker_prepare(p)`; re-check the
/// condition; if it holds, `spindle_parker_cancel(p, key)`; otherwise
/// `spindle_parker_wait(p, key, timeout)`.
/// Protocol (notifier): make the condition true, then
/// `spindle_parker_notify(p)`. No wake-up is lost: prepare and notify are
/// sequentially consistent.
///
/// One wake per sleep: the first notify that finds waiters unregisters all
/// of them at once and issues the wake; the notifies that follow while the
/// woken threads are still getting up (~13 us here) find nobody registered
/// and cost one load, not a system call each.
typedef struct spindle_parker spindle_parker;

/// Creates a parker (cache-line sized and aligned). NULL on exhaustion.
spindle_parker *spindle_parker_create(void);

/// Frees a parker. Nobody may be waiting on it.
void spindle_parker_destroy(spindle_parker *parker);

/// The bytes of a parker placed in memory its caller owns
/// (`spindle_parker_init`): for an object that keeps its parker on its own
/// line, where a parker of its own (`spindle_parker_create`) takes another.
size_t spindle_parker_size(void);

/// Makes a parker in `memory` (8-byte aligned, `spindle_parker_size()`
/// bytes, which the caller keeps until `spindle_parker_deinit`).
spindle_parker *spindle_parker_init(void *memory);

/// Ends a parker made by `spindle_parker_init` (its memory stays the
/// caller's). No thread may wait on it or notify it any more.
void spindle_parker_deinit(spindle_parker *parker);

/// Reads the wake sequence, then registers the caller as a waiter (in that
/// order: a notify that ends the waiter's round always bumps the sequence
/// after the read, so `wait` returns; see spindle_parker.c), and returns the
/// key for `wait` or `cancel`.
uint64_t spindle_parker_prepare(spindle_parker *parker);

/// Withdraws a `prepare` whose condition turned out to hold.
void spindle_parker_cancel(spindle_parker *parker, uint64_t key);

/// Sleeps until notified after `prepare` returned `key`, or until
/// `timeout_ns` passes (0 = no timeout). May wake spuriously: callers loop.
/// Unregisters the waiter before returning.
void spindle_parker_wait(spindle_parker *parker, uint64_t key,
                         uint64_t timeout_ns);

/// Wakes every waiter if there is one. Any thread. Costs one load when nobody
/// waits. Sequentially consistent: pair it after the write that makes the
/// waiters' condition true.
void spindle_parker_notify(spindle_parker *parker);

/// True when a waiter is registered (a sequentially consistent load of the
/// registry). Any thread. For a notifier that checks a cheaper condition
/// only when someone could need waking: after the write that makes the
/// waiters' condition true (a seq_cst RMW), false means every waiter that
/// registers from now on re-checks its condition and sees that write.
bool spindle_parker_has_waiters(const spindle_parker *parker);

/// How many wake-ups (futex wake calls) this parker has issued. Diagnostics
/// and tests; any thread (relaxed).
uint64_t spindle_parker_wake_count(const spindle_parker *parker);

/// Names the calling thread (truncated to 15 bytes on Linux).
/// Why a shim: glibc declares pthread_setname_np only under _GNU_SOURCE,
/// which Swift's Glibc module does not define.
void spindle_thread_set_name(const char *name);

/// The CPU the calling thread runs on (`sched_getcpu`, a vDSO call on
/// Linux), or -1 where the platform does not say. A hint only: the thread
/// may move at once. Why a shim: glibc declares it only under _GNU_SOURCE.
int spindle_current_cpu(void);

/// Asks the kernel to give the calling thread short time slices, so that
/// its wake-ups preempt a CPU-bound thread on a busy core at once instead of
/// waiting out that thread's slice (a millisecond or more). Linux 6.12 and
/// later: `sched_setattr` with a `sched_runtime` on a `SCHED_OTHER`
/// thread (EEVDF's custom slice; the kernel clamps it to 0.1–100 ms). The
/// thread's share of the CPU does not change, only how finely it is cut.
/// The thread's policy and nice value are kept; a thread under another
/// policy (`SCHED_BATCH`, `SCHED_IDLE`, real time) is left alone, as is any
/// thread on an older kernel or another platform. Returns the slice the
/// kernel reports afterwards in nanoseconds, or 0 when none was set.
uint64_t spindle_thread_request_slice(uint64_t nanoseconds);

/// The calling thread's time slice in nanoseconds as the kernel reports it
/// (`sched_getattr`: from Linux 6.12 the slice the thread asked for, or the
/// kernel's default; 0 before, and on other platforms), its policy (-1 where
/// there is none to read) and its nice value. Tests.
uint64_t spindle_thread_slice(int *policy, int *nice);

/// The calling thread's pool (an opaque owner pointer set by the pool's
/// threads when they start), or NULL on any other thread. A `.block` emit
/// made on a pool thread uses it to tell its pool that one of its threads
/// is about to wait (see `PoolCore.threadWillBlock`). Thread-local.
void spindle_thread_set_pool(void *pool);
void *spindle_thread_pool(void);

/// How many loop schedulings the calling thread is inside (a slice's
/// feedback may emit into another loop): the inline fast path runs a loop's
/// scheduling on the emitting thread only outside every one. Thread-local
/// (spindle_thread.c; declared inside the functions, so that Swift does
/// not try to import a thread-local variable); a runner enters before a
/// scheduling and leaves after it.
static inline __attribute__((always_inline)) void spindle_thread_enter_slice(void) {
    extern _Thread_local unsigned spindle_thread_slice_depth;
    extern _Thread_local uint64_t spindle_thread_schedulings;
    spindle_thread_slice_depth++;
    spindle_thread_schedulings++;
}

/// How many loop schedulings the calling thread has entered so far (each
/// `spindle_thread_enter_slice` counts one). A runner that reads the same
/// count plus one when it next runs a loop it left idle knows the thread
/// ran no other loop in between. Thread-local, as the depth.
static inline __attribute__((always_inline)) uint64_t spindle_thread_scheduling_count(void) {
    extern _Thread_local uint64_t spindle_thread_schedulings;
    return spindle_thread_schedulings;
}

static inline __attribute__((always_inline)) void spindle_thread_leave_slice(void) {
    extern _Thread_local unsigned spindle_thread_slice_depth;
    spindle_thread_slice_depth--;
}

static inline __attribute__((always_inline)) bool spindle_thread_in_slice(void) {
    extern _Thread_local unsigned spindle_thread_slice_depth;
    return spindle_thread_slice_depth != 0;
}

/// `spindle_parker_notify` without its leading fence, for callers that have
/// just performed a sequentially consistent read-modify-write after making
/// the waiters' condition true, or whose RMW itself made it true (a locked
/// instruction on x86, an acquire-release RMW on ARMv8: both order the
/// earlier write before this load).
void spindle_parker_notify_after_rmw(spindle_parker *parker);

/// One CPU relax hint (`pause` on x86), for spin loops in Swift.
void spindle_cpu_relax(void);

/// The monotonic clock in nanoseconds (CLOCK_MONOTONIC; a vDSO call, no
/// system call), for spin budgets measured in time rather than pauses.
uint64_t spindle_monotonic_ns(void);

#ifdef __cplusplus
}
#endif

#endif // SPINDLE_PARKER_H
