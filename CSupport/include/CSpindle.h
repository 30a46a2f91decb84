// CSpindle: the C half of Spindle's engine.
//
// Four structures live here, each behind an opaque pointer so that Swift
// never sees liburcu's types (its transparent-union arguments cannot be
// called from Swift; every liburcu call is wrapped in a plain-pointer shim):
//
//   spindle_wfq_*     unbounded MPSC event queue on liburcu's wait-free
//                     concurrent queue (wfcqueue), with pooled nodes that carry
//                     the Swift payload inline (no allocation per event in
//                     steady state).
//   spindle_lane_*    per-producer SPSC lanes in linked blocks, the threads'
//                     tables of them and the runner's set (LANES.md).
//   spindle_ring_*    bounded MPSC ring in C11 <stdatomic.h>: per-slot
//                     sequence numbers, cache-line padded, power-of-two
//                     capacity, batch claim / batch consume. It hands out
//                     sequence numbers; the payloads live in a Swift array.
//   spindle_parker_*  an event count on a futex: a thread spins briefly, then
//                     sleeps until another thread notifies.
//
// Naming follows liburcu's ladder: a plain name is safe from any thread; a
// `_consumer` name must only be called by the single consumer thread.
#ifndef CSPINDLE_H
#define CSPINDLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// MARK: - Unbounded wait-free MPSC queue (liburcu wfcqueue)

/// An unbounded multi-producer / single-consumer queue of fixed-size payloads.
///
/// Each event travels in a pooled node whose payload area (`payload_size`
/// bytes, aligned to `payload_align`) the producer fills in place. Nodes come
/// from slabs that are only freed by `spindle_wfq_destroy`, and go back to a
/// lock-free free list after the consumer is done with them.
///
/// Concurrency table (like wfcqueue.h's): which pairs may run at once.
///
///   | operation            | acquire | enqueue | splice/next | release |
///   | acquire   (any)      |   yes   |   yes   |     yes     |   yes   |
///   | enqueue   (any)      |   yes   |   yes   |     yes     |   yes   |
///   | splice/next/is_empty |   yes   |   yes   |     no*     |   yes   |
///   | release   (any)      |   yes   |   yes   |     yes     |   yes   |
///   * consumer operations must be called from one thread at a time.
typedef struct spindle_wfq spindle_wfq;

/// Creates a queue. Returns NULL when memory is exhausted or when
/// `payload_align` is not a power of two no greater than 64.
/// `nodes_per_slab` is rounded up to a power of two (minimum 8); each new
/// slab doubles the last, so an idle queue holds one small slab.
spindle_wfq *spindle_wfq_create(size_t payload_size, size_t payload_align,
                                size_t nodes_per_slab);

/// Frees every slab. The caller must have consumed or deinitialized every
/// payload it initialized, and no other thread may touch the queue.
void spindle_wfq_destroy(spindle_wfq *queue);

/// Takes a free node from the pool (allocating a slab when the pool is empty)
/// and returns its payload area, uninitialized. Any thread.
/// Lock-free in steady state; takes a mutex only to allocate a new slab.
/// Returns NULL only when memory is exhausted.
/// Ownership: the caller owns the node until it passes it to
/// `spindle_wfq_enqueue` or `spindle_wfq_release`.
void *spindle_wfq_acquire(spindle_wfq *queue);

/// Appends a node (by its payload pointer) to the queue. Any thread; wait-free.
/// Ordering: everything the caller wrote to the payload happens-before the
/// consumer's `spindle_wfq_next_consumer` returning it; the call is a full
/// memory barrier (liburcu's xchg). Ownership passes to the queue.
void spindle_wfq_enqueue(spindle_wfq *queue, void *payload);

/// Moves every node enqueued so far into the consumer's private batch.
/// Consumer only. Non-blocking: when a producer is caught mid-enqueue it backs
/// off briefly (spin, then yield) instead of liburcu's fixed 10 ms sleep.
/// Returns true if the batch holds an unread node afterwards.
bool spindle_wfq_splice_consumer(spindle_wfq *queue);

/// Returns the next payload of the private batch, in enqueue order per
/// producer, or NULL when the batch is exhausted. The payload returned by the
/// previous call is retired by this call (see spindle_wfq_flush_consumer for
/// when retired nodes reach the pool), so the caller must be done with it
/// (moved or deinitialized it) before calling again.
/// Consumer only.
void *spindle_wfq_next_consumer(spindle_wfq *queue);

/// Hands every node the consumer has finished with back to the pool.
/// Consumer only. Finished nodes otherwise go back in chains of at least 64
/// (one CAS per chain, not per batch: with small batches a per-batch push
/// contends with producers on the free list); the engine calls this before
/// its reducer thread sleeps.
void spindle_wfq_flush_consumer(spindle_wfq *queue);

/// Takes up to `count` free nodes with one CAS per run of the free list
/// (growing the pool when it runs dry) and stores their payload areas in
/// `payloads`. Any thread. Returns how many it took: `count`, unless memory
/// ran out. Ownership as for `spindle_wfq_acquire`.
size_t spindle_wfq_acquire_many(spindle_wfq *queue, void **payloads, size_t count);

/// Appends `count` acquired nodes (by payload pointer) in array order with
/// one tail exchange: a producer's batch is published at once, in order,
/// after everything it enqueued before. Any thread; wait-free. Ordering and
/// ownership as for `spindle_wfq_enqueue` (a full barrier).
void spindle_wfq_enqueue_many(spindle_wfq *queue, void *const *payloads, size_t count);

/// Returns a node that was acquired but never enqueued to the pool. Any thread.
void spindle_wfq_release(spindle_wfq *queue, void *payload);

/// True when nothing is enqueued and the private batch holds no unread node.
/// Consumer only (it reads the consumer's private batch).
bool spindle_wfq_is_empty_consumer(spindle_wfq *queue);

/// True when nothing is enqueued outside the consumer's private batch. Any
/// thread (reads only the shared head and tail; a snapshot). For the
/// executor's re-check after a loop goes idle, when another thread may
/// already be the consumer.
bool spindle_wfq_looks_empty(spindle_wfq *queue);

/// Enqueues a marker carrying `marker` (a lane that opens: see LANES.md) in
/// order with the events, as `spindle_wfq_enqueue` would an event. The
/// queue's payload must be at least a pointer's size and alignment. Any
/// thread. False when memory is exhausted.
bool spindle_wfq_enqueue_marker(spindle_wfq *queue, void *marker);

/// Consumer only: `spindle_wfq_next_consumer`, except that a marker is not
/// returned as a payload: it returns NULL and stores the marker's pointer in
/// `*marker` (which it leaves alone otherwise). NULL with `*marker`
/// untouched: the batch is exhausted.
void *spindle_wfq_next_or_marker_consumer(spindle_wfq *queue, void **marker);

/// Number of nodes ever allocated (pool size). Any thread; for tests and
/// benchmarks (steady state means this stops growing).
size_t spindle_wfq_allocated_nodes(spindle_wfq *queue);

// MARK: - Bounded MPSC ring (C11 atomics)

/// A bounded multi-producer / single-consumer ring of sequence numbers.
///
/// Producers claim consecutive sequence numbers, write the payload for
/// `seq & (capacity - 1)` in their own storage, then publish. The consumer
/// reads runs of published slots and releases them, in order.
///
/// Concurrency table:
///
///   | operation              | claim | publish | available | release |
///   | claim     (any)        |  yes  |   yes   |    yes    |   yes   |
///   | publish   (claimer)    |  yes  |   yes   |    yes    |   yes   |
///   | available (consumer)   |  yes  |   yes   |    no*    |   no*   |
///   | release   (consumer)   |  yes  |   yes   |    no*    |   no*   |
///   * consumer operations must be called from one thread at a time.
typedef struct spindle_ring spindle_ring;

/// Creates a ring. `capacity` is rounded up to a power of two (min 2).
/// Returns NULL when memory is exhausted or capacity exceeds 2^30.
spindle_ring *spindle_ring_create(size_t capacity);

/// Frees the ring. No other thread may touch it.
void spindle_ring_destroy(spindle_ring *ring);

/// The ring's capacity (a power of two). Any thread.
size_t spindle_ring_capacity(const spindle_ring *ring);

/// Claims up to `count` consecutive free slots; any thread, lock-free.
/// Returns how many were claimed (0 when the ring is full) and stores the
/// first claimed sequence number in `*first`. The caller must publish every
/// claimed sequence number, or the consumer stalls at the first unpublished
/// one.
/// Ordering: acquire on the slot's sequence, so the consumer's reads of the
/// slot's previous payload happen-before the caller's write; the claim itself
/// is a sequentially consistent RMW on the tail (see notify_after_rmw).
size_t spindle_ring_claim(spindle_ring *ring, size_t count, uint64_t *first);

/// Publishes a claimed slot: the payload for `seq` is written. Release
/// ordering: the payload write happens-before the consumer's read.
/// Called by the thread that claimed `seq` (or one it handed the slot to).
void spindle_ring_publish(spindle_ring *ring, uint64_t seq);

/// Number of consecutive published slots starting at the consumer position,
/// at most `max`; stores the position in `*first`. Acquire ordering.
/// Consumer only.
size_t spindle_ring_available_consumer(spindle_ring *ring, size_t max,
                                       uint64_t *first);

/// Releases the first `count` slots reported by `available`, making them free
/// for producers (release ordering). Consumer only.
void spindle_ring_release_consumer(spindle_ring *ring, size_t count);

/// Number of claimed-but-not-released slots (approximate under concurrency).
size_t spindle_ring_depth(const spindle_ring *ring);

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
    spindle_thread_slice_depth++;
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

// MARK: - Thread Sanitizer support

/// True when the C target was built with Thread Sanitizer.
bool spindle_tsan_enabled(void);

/// Test-only: a deliberately unsynchronized increment of a shared counter, so
/// that the stress suite can prove TSan reports real races (the canary).
void spindle_racy_increment(long *counter);

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

// MARK: - Scheduling (executors' ready queue, per-loop task node)

/// A loop's scheduling node: the intrusive link that puts it on a ready
/// queue, and the node of its one deferred grace period (stop). The loop's
/// scheduling state itself is a Swift atomic (see PROTOCOL.md beside the
/// Swift scheduling code); only the idle -> scheduled edge pushes a task, so
/// a task is on at most one ready queue at a time.
typedef struct spindle_task spindle_task;

/// The size of a task (a multiple of 8; 8-byte alignment suffices), so the
/// loop can keep it in an allocation of its own.
size_t spindle_task_size(void);

/// Initializes a task in `memory` (spindle_task_size() bytes, 8-aligned),
/// carrying `context` (the loop; not retained), and returns it. Any thread.
spindle_task *spindle_task_init(void *memory, void *context);

/// Ends a task's life (the memory is the caller's to free). It must not be on
/// a ready queue nor have a grace period pending. No other thread may touch it.
void spindle_task_deinit(spindle_task *task);

/// The task's context. Any thread.
void *spindle_task_context(spindle_task *task);

/// Sets the context, once, before the task is visible to another thread
/// (Swift creates the task before the object it points back to).
void spindle_task_set_context(spindle_task *task, void *context);

/// Active processors (sysconf), at least 1. Any thread.
long spindle_active_processors(void);

/// Calls `callback(context)` on Spindle's grace thread once every emit
/// gate section (`spindle_gate_enter`) open at the time of this call has
/// exited (on liburcu's call_rcu thread, 10 ms later, if the grace thread
/// could not be created). At most once per task. Any thread, outside a gate
/// section; never blocks (tasks waiting together share a grace period).
/// Ordering: everything the caller did before this call happens-before the
/// callback.
void spindle_task_after_grace_period(spindle_task *task, void (*callback)(void *context));

/// Tasks initialized and not deinitialized, process-wide (leak checks). Any thread.
long spindle_live_tasks(void);

/// An unbounded ready queue of tasks: many pushers, many poppers.
///
/// Concurrency table:
///
///   | operation   | push | pop | is_empty |
///   | push  (any) | yes  | yes |   yes    |
///   | pop   (any) | yes  | yes |   yes    |
///   pop serializes poppers on an internal mutex; push is wait-free.
typedef struct spindle_runq spindle_runq;

/// Creates a ready queue. NULL on exhaustion.
spindle_runq *spindle_runq_create(void);

/// Frees a ready queue. It must be empty; no other thread may touch it.
void spindle_runq_destroy(spindle_runq *queue);

/// Appends `task`, which must not be on any queue. Any thread; wait-free; a
/// full barrier (liburcu's exchange), so a parker notify may follow with
/// `spindle_parker_notify_after_rmw`.
/// Ordering: the pusher's writes happen-before the popper's return.
void spindle_runq_push(spindle_runq *queue, spindle_task *task);

/// Removes and returns the oldest task, or NULL when the queue is empty.
/// Any thread; poppers are serialized on a mutex (never held while user code
/// runs); does not wait for an empty queue.
spindle_task *spindle_runq_pop(spindle_runq *queue);

/// True when no task is queued (a snapshot). Any thread; two loads.
bool spindle_runq_is_empty(spindle_runq *queue);

// MARK: - Per-producer lanes (SPSC, linked blocks)

/// A single-producer / single-consumer queue of fixed-size payloads in linked
/// blocks: one hot producer thread's way into one loop. The protocol that
/// keeps the loop's contract (order across the switch from the shared queue,
/// the idle edge, stop, reclamation) is LANES.md ("v2, as built") beside the scheduling model;
/// lanes.pml model-checks it.
///
/// The lane word: the count of published slots, and flags.
#define SPINDLE_LANE_EXITED (1ull << 61)    /* the producer let go (thread exit, evicted) */
#define SPINDLE_LANE_ORPHANED (1ull << 60)  /* the loop is gone */
#define SPINDLE_LANE_COUNT_MASK 0x0FFFFFFFFFFFFFFFull  /* bits 0-59 */

///   | operation                    | producer ops | runner ops | release_loop |
///   | begin/slot/publish/abort (1) |      no*     |    yes     |     no**     |
///   | available/run/reclaim  (1)   |      yes     |    no*     |     no       |
///   * one thread at a time on each side.
///   ** the loop is released only when no emit into it can be running.
///   Who frees a lane: exactly one of the runner (EXITED and drained), the
///   producer thread (it finds ORPHANED when it lets go), or `release_loop`
///   (it finds EXITED).
typedef struct spindle_lane spindle_lane;

/// Creates a lane for `loop_id` (a loop identity that is never reused),
/// with its first block. `slots_per_block` at least 2. NULL on exhaustion or
/// when `payload_align` is not a power of two no greater than 64.
spindle_lane *spindle_lane_create(uint64_t loop_id, size_t payload_size, size_t payload_align,
                                  size_t slots_per_block);
/// Frees a lane and its blocks. The caller must have consumed or
/// deinitialized every payload in it; no other thread may touch it.
void spindle_lane_destroy(spindle_lane *lane);
/// Frees a lane after a grace period of the emit gate (liburcu call_rcu):
/// for a lane a thread re-checking an idle loop may still be reading.
void spindle_lane_destroy_deferred(spindle_lane *lane);
/// Lanes created and not destroyed, process-wide (leak checks).
long spindle_live_lanes(void);
/// Lanes ever created, process-wide (tests: whether a path took lanes).
long spindle_lanes_created(void);

// The producer's per-event calls (begin, slot, publish, abort, current)
// are static inline, below, so that they compile into the emitting code.

/// Producer, between begin and publish: links the next block (one the
/// runner handed back, or a new one, twice the last new one's size) and
/// returns its first slot, the emit having taken `reserved` slots before it;
/// `spindle_lane_slot` and `spindle_lane_slots` call it when the current
/// block is full. NULL on exhaustion.
void *spindle_lane_slot_in_next_block(spindle_lane *lane, size_t reserved);
/// Producer, between begin and publish, after `reserved` slots taken by
/// this emit (a batch): up to `max` next slots that lie next to each other
/// (`round_up(payload_size, payload_align)` apart), the first's address
/// returned and their number in `*count` (0 and NULL on exhaustion or when
/// `max` is 0). Call again for the rest of a batch, with `reserved` grown by
/// `*count`.
void *spindle_lane_slots(spindle_lane *lane, size_t reserved, size_t max, size_t *count);
/// Producer: lets go of a lane it will not use again (EXITED), freeing it
/// when the loop is gone (as at thread exit).
void spindle_lane_let_go(spindle_lane *lane);

/// Runner: the lane word (sequentially consistent), for the re-check after
/// the loop's IDLE store: runnable when it has BUSY or a count above what
/// the runner consumed.
uint64_t spindle_lane_word(const spindle_lane *lane);
/// Runner: reads the published count (acquire) and returns how many slots
/// wait.
size_t spindle_lane_available_consumer(spindle_lane *lane);
/// Runner: the next run of waiting slots (counted by the last `available`)
/// that lie next to each other, at most `max`: returns the first payload
/// and stores the run's length in `*count` (0 and NULL: none). Payloads are
/// `round_up(payload_size, payload_align)` apart. Every payload of the
/// previous run must be moved out and `spindle_lane_consumed` called before
/// this is called again (a drained block is handed back here).
void *spindle_lane_run_consumer(spindle_lane *lane, size_t max, size_t *count);
/// Runner: the first `count` payloads of the last run were moved out.
void spindle_lane_consumed(spindle_lane *lane, size_t count);
/// Runner: one payload (`run` and `consumed` for one), or NULL.
void *spindle_lane_next_consumer(spindle_lane *lane);
/// Runner, at a slice's end: true when the lane's thread let it go (EXITED)
/// and every event is taken: remove it from the set, then free it
/// (deferred).
bool spindle_lane_reclaim_consumer(spindle_lane *lane);
/// The loop is going away: marks the lane ORPHANED; frees it and returns
/// true when its producer already let go (EXITED).
bool spindle_lane_release_loop(spindle_lane *lane);

/// The calling thread's lane into `loop_id`, or NULL. When NULL, counts the
/// emit in the thread's streak for that loop and sets `*should_open` once
/// the streak reaches `streak_to_open` (then: create, send the marker,
/// `spindle_lane_install`). An entry of another loop in the same table slot
/// is let go (its lane marked EXITED). Thread-local; any thread.
spindle_lane *spindle_lane_lookup(uint64_t loop_id, uint32_t streak_to_open, bool *should_open);
/// Puts `lane` in the calling thread's table (its producer from now on);
/// registers the thread-exit hook that lets its lanes go. False if the hook
/// cannot be registered (then the caller destroys the lane).
bool spindle_lane_install(spindle_lane *lane);
/// Producer: every event it published has been reduced (the runner's
/// count, acquire), so its next emits may go through the shared queue
/// without passing them.
bool spindle_lane_drained(spindle_lane *lane);
/// Producer, after an emit on `lane` whose wake-up found the loop idle:
/// when that happened often enough lately (4 times within 64 emits), the
/// thread lets the lane go: a loop that idles between emits is better
/// served by the shared queue (each idle transition costs its runner a
/// membarrier). Only once every event on the lane is reduced, so that the
/// thread's next emits cannot pass them: at once if it is drained, else at
/// the thread's next emit into the loop that finds it drained (the entry is
/// marked, `spindle_lane_current` returns NULL for it, and
/// `spindle_lane_lookup` lets it go). Thread-local.
void spindle_lane_note_idle(uint64_t loop_id, spindle_lane *lane);
/// The calling thread's emit through the shared queue found the loop idle:
/// its streak towards a lane starts again. Thread-local.
void spindle_lane_reset_streak(uint64_t loop_id);

/// The lanes a loop's runner reads (see spindle_lane.c): changed by the
/// runner only; scanned by any thread (`looks_runnable`).
typedef struct spindle_lane_set spindle_lane_set;
spindle_lane_set *spindle_lane_set_create(void);
/// Frees the set and lets go of every lane in it (`spindle_lane_release_loop`).
/// The loop is going away: nobody else touches the set.
void spindle_lane_set_destroy(spindle_lane_set *set);
/// Runner: adds a lane (its marker was reduced). False on exhaustion.
bool spindle_lane_set_add_consumer(spindle_lane_set *set, spindle_lane *lane);
/// Runner: removes the lane at `index` (order of the others kept).
void spindle_lane_set_remove_consumer(spindle_lane_set *set, size_t index);
/// Runner: how many lanes, and the one at `index`.
size_t spindle_lane_set_count_consumer(spindle_lane_set *set);
spindle_lane *spindle_lane_set_at_consumer(spindle_lane_set *set, size_t index);
/// Any thread (the idle re-check): true when a lane is BUSY or holds a slot
/// its runner has not taken. Sequentially consistent loads of the words,
/// inside a gate section.
bool spindle_lane_set_looks_runnable(spindle_lane_set *set, bool fence);
// MARK: - Per-producer lanes: the producer's fast path (inline)

/// A block of a lane: its header, then `capacity` slots. Public only for
/// the inline functions below.
struct spindle_lane_block {
    _Atomic(struct spindle_lane_block *) next;  // written by the producer before it publishes a slot in next
    uint32_t capacity;                          // slots; immutable
};

/// A lane's first cache line: the producer's. `spindle_lane` begins with it
/// (spindle_lane.c), and its published count (the lane word) is the first
/// word of the second line. Public only for the inline functions below;
/// Swift never reads it.
struct spindle_lane_producer {
    /// The producer's emit generation, odd while an emit is under way:
    /// plain stores (the runner reads it only after a membarrier, see
    /// `spindle_lane_begin`), at idle re-checks and at stop, never per event.
    _Atomic uint64_t busy;
    /// The published count at `tail_block`'s first slot. The next slot's
    /// index in the block is the published count (read back from the lane
    /// word, which only the producer's publishes change while it emits)
    /// minus this: an emit stores no cursor of its own.
    uint64_t block_base;
    struct spindle_lane_block *tail_block;
    uint32_t tail_capacity;                 // tail_block's capacity (a copy, on this line)
    uint32_t next_capacity;                 // the next new block's slots
    uint32_t payload_offset;                // the first slot's offset in a block
    uint32_t stride;                        // bytes per slot
    struct spindle_lane_block *free_chain;  // drained blocks to reuse
};
#define SPINDLE_LANE_WORD_OFFSET 64

/// One entry of a thread's table of lanes.
struct spindle_lane_entry {
    uint64_t loop_id;      // 0: empty
    spindle_lane *lane;    // NULL: counting a streak, no lane yet
    uint32_t streak;
    bool let_go_pending;   // the lane goes once drained (spindle_lane_note_idle)
};
#define SPINDLE_LANE_TABLE_SIZE 8
/// A thread's table of lanes (thread-local; spindle_lane.c).
struct spindle_lane_table {
    struct spindle_lane_entry entries[SPINDLE_LANE_TABLE_SIZE];
    uint32_t next_victim;
    bool registered;
};

/// The calling thread's table. (Declared inside the function, so that
/// Swift does not try to import a thread-local variable.)
static inline __attribute__((always_inline)) struct spindle_lane_table *spindle_lane_table_of_thread(void) {
    extern _Thread_local struct spindle_lane_table spindle_lane_thread_table;
    return &spindle_lane_thread_table;
}

/// A number that identifies the calling thread among live threads (the
/// address of its lane table): cheaper than `pthread_self`, which is a call.
static inline __attribute__((always_inline)) uintptr_t spindle_thread_token(void) {
    return (uintptr_t)spindle_lane_table_of_thread();
}

static inline __attribute__((always_inline)) uint32_t spindle_lane_table_slot(uint64_t loop_id) {
    return (uint32_t)((loop_id * 0x9E3779B97F4A7C15ull) >> 61) & (SPINDLE_LANE_TABLE_SIZE - 1);
}

/// The calling thread's lane into `loop_id`, or NULL: `spindle_lane_lookup`
/// without the streak (no side effect). NULL too for a lane waiting to be
/// let go (the lookup decides). Thread-local; any thread.
static inline __attribute__((always_inline)) spindle_lane *spindle_lane_current(uint64_t loop_id) {
    struct spindle_lane_entry *entry = &spindle_lane_table_of_thread()->entries[spindle_lane_table_slot(loop_id)];
    return entry->loop_id == loop_id && !entry->let_go_pending ? entry->lane : NULL;
}

/// Producer: starts an emit: a plain store of the BUSY generation (odd),
/// then a compiler barrier (a full fence when membarrier is unavailable).
/// The caller then loads the loop's `closed`; the runner's membarrier
/// (`spindle_lanes_heavy_fence`) orders the two for the side that reads.
static inline __attribute__((always_inline)) void spindle_lane_begin(spindle_lane *lane) {
    extern _Atomic bool spindle_lanes_asymmetric;
    struct spindle_lane_producer *producer = (struct spindle_lane_producer *)lane;
    uint64_t generation = atomic_load_explicit(&producer->busy, memory_order_relaxed);
    atomic_store_explicit(&producer->busy, generation + 1, memory_order_relaxed);
    if (atomic_load_explicit(&spindle_lanes_asymmetric, memory_order_relaxed)) {
        atomic_signal_fence(memory_order_seq_cst);
    } else {
        atomic_thread_fence(memory_order_seq_cst);
    }
}

/// Producer: ends an emit: the BUSY generation back to even (release).
static inline __attribute__((always_inline)) void spindle_lane_abort(spindle_lane *lane) {
    struct spindle_lane_producer *producer = (struct spindle_lane_producer *)lane;
    uint64_t generation = atomic_load_explicit(&producer->busy, memory_order_relaxed);
    atomic_store_explicit(&producer->busy, generation + 1, memory_order_release);
}

/// Producer: the count of slots it published, read back from the lane word
/// (relaxed: only the producer's own publishes change the count, and the
/// flags are never set while an emit is under way).
static inline __attribute__((always_inline)) uint64_t spindle_lane_published_producer(spindle_lane *lane) {
    const _Atomic uint64_t *word = (const _Atomic uint64_t *)((const char *)lane + SPINDLE_LANE_WORD_OFFSET);
    return atomic_load_explicit(word, memory_order_relaxed) & SPINDLE_LANE_COUNT_MASK;
}

/// Producer, between begin and publish, for an emit of one event: its
/// slot's payload area, uninitialized (linking a block when the current one
/// is full). A batch takes its slots with `spindle_lane_slots`. NULL on
/// exhaustion: abort. Stores nothing unless it links a block.
static inline __attribute__((always_inline)) void *spindle_lane_slot(spindle_lane *lane) {
    struct spindle_lane_producer *producer = (struct spindle_lane_producer *)lane;
    uint64_t index = spindle_lane_published_producer(lane) - producer->block_base;
    if (__builtin_expect(index == producer->tail_capacity, 0))
        return spindle_lane_slot_in_next_block(lane, 0);
    return (char *)producer->tail_block + producer->payload_offset + (size_t)index * producer->stride;
}

/// Producer: publishes the `count` slots taken since begin (a release store
/// of the lane word), then ends the emit. `count` may be 0.
static inline __attribute__((always_inline)) void spindle_lane_publish(spindle_lane *lane, size_t count) {
    // The count first (release: the payloads happen-before the runner's
    // acquire load), then the end of the emit (release: the count
    // happens-before a runner that sees BUSY clear).
    _Atomic uint64_t *word = (_Atomic uint64_t *)((char *)lane + SPINDLE_LANE_WORD_OFFSET);
    atomic_store_explicit(word, spindle_lane_published_producer(lane) + count, memory_order_release);
    spindle_lane_abort(lane);
}

// MARK: - Per-producer lanes: the whole emit, inlined into the caller

/// A loop's hot words (`LoopWords.swift` lays them out from these): the
/// runner's thread token, the scheduling state, `closed`.
#define SPINDLE_WORDS_RUNNER_TOKEN_OFFSET 0
#define SPINDLE_WORDS_SCHEDULING_OFFSET 16
#define SPINDLE_WORDS_CLOSED_OFFSET 17
/// `SchedulingState.running`: a loop in this state or the next (finished)
/// needs no wake-up look after an emit; idle and scheduled do.
#define SPINDLE_SCHEDULING_RUNNING 2

/// Producer: starts an emit on `lane` (its BUSY store), then reads the
/// `closed` word of the loop whose words are at `words`: false, with the
/// emit ended, when the loop is closed. The load may pass the BUSY store
/// (a plain store); a stop's last slice calls membarrier before it reads
/// BUSY, so either it sees this emit under way, or this load sees `closed`
/// (LANES.md, "v2, as built"). Every lane emit starts here.
static inline __attribute__((always_inline)) bool spindle_lane_begin_unless_closed(
    spindle_lane *lane, const void *words) {
    spindle_lane_begin(lane);
    const _Atomic bool *closed = (const _Atomic bool *)((const char *)words + SPINDLE_WORDS_CLOSED_OFFSET);
    if (atomic_load_explicit(closed, memory_order_relaxed)) {
        spindle_lane_abort(lane);
        return false;
    }
    return true;
}

/// Producer, the fast path's first half (`SpinLoop.emit`, compiled into
/// the caller so that it spills nothing: each store it saves is one more
/// emit the store buffer holds while a line is on its way from the other
/// core): when the calling thread has a lane into the loop whose words are
/// at `words` and is not its runner, starts an emit on it (BUSY, then the
/// `closed` load) and returns the lane, with the slot to fill in `*slot`.
/// NULL with nothing changed in every other case (no lane, the runner, a
/// closed loop, no memory for a block): the caller takes the full path.
static inline __attribute__((always_inline)) spindle_lane *spindle_lane_fast_reserve(
    uint64_t loop_id, const void *words, void **slot) {
    spindle_lane *lane = spindle_lane_current(loop_id);
    if (lane == NULL) return NULL;
    const _Atomic uintptr_t *runner =
        (const _Atomic uintptr_t *)((const char *)words + SPINDLE_WORDS_RUNNER_TOKEN_OFFSET);
    if (atomic_load_explicit(runner, memory_order_relaxed) == spindle_thread_token()) return NULL;
    if (!spindle_lane_begin_unless_closed(lane, words)) return NULL;
    void *payload = spindle_lane_slot(lane);
    if (payload == NULL) {
        spindle_lane_abort(lane);
        return NULL;
    }
    *slot = payload;
    return lane;
}

/// Producer, the fast path's second half: publishes the slot filled since
/// `spindle_lane_fast_reserve`, ends the emit, then loads the loop's
/// scheduling state (as `wake()` does, after the publish): below
/// `SPINDLE_SCHEDULING_RUNNING` the caller takes the wake-up path.
static inline __attribute__((always_inline)) uint8_t spindle_lane_fast_publish(spindle_lane *lane, const void *words) {
    spindle_lane_publish(lane, 1);
    const _Atomic uint8_t *state = (const _Atomic uint8_t *)((const char *)words + SPINDLE_WORDS_SCHEDULING_OFFSET);
    return atomic_load_explicit(state, memory_order_seq_cst);
}

/// Runner: true when a lane holds a published slot the runner has not
/// taken. A hint (relaxed loads, BUSY not read): for the runner's linger.
bool spindle_lane_set_has_published_consumer(spindle_lane_set *set);
/// Registers the process for membarrier, once; true when the asymmetric
/// fence is in use (lane emits then cost no fence). `spindle_lane_set_create`
/// calls it, so it runs before the first lane of any loop.
bool spindle_lanes_prepare(void);
/// The heavy side of the asymmetric fence (membarrier), or a full fence.
void spindle_lanes_heavy_fence(void);

// MARK: - Diagnostics

/// Queues and rings created and not yet destroyed, process-wide (relaxed
/// counter; for leak checks). Any thread.
long spindle_live_queues(void);

#ifdef __cplusplus
}
#endif

#endif // CSPINDLE_H
