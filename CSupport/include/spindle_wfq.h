// CSpindle: Unbounded wait-free MPSC queue (liburcu wfcqueue).
// One part of the module: CSpindle.h includes every part and gives the
// overview and the naming ladder.
#ifndef SPINDLE_WFQ_H
#define SPINDLE_WFQ_H

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
/// thread (reads only the shared tail, one line; a snapshot). For the
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

#ifdef __cplusplus
}
#endif

#endif // SPINDLE_WFQ_H
