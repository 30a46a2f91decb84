// CSpindle: Bounded MPSC ring (C11 atomics).
// One part of the module: CSpindle.h includes every part and gives the
// overview and the naming ladder.
#ifndef SPINDLE_RING_H
#define SPINDLE_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif

#endif // SPINDLE_RING_H
