// The bounded MPSC ring: C11 atomics only (TSan understands them, so no
// annotations are needed here).
//
// Each slot carries a sequence number (Vyukov's bounded queue):
//   seq == pos             slot is free for the producer claiming `pos`
//   seq == pos + 1         slot holds the payload for `pos` (published)
//   seq == pos + capacity  slot was consumed; free for `pos + capacity`
// The consumer releases slots strictly in order, so when the last slot of a
// range is free, every slot before it is free too: that is what makes a
// batch claim a single CAS.
#include "CSpindle.h"
#include "spindle_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define SPINDLE_RING_MAX_CAPACITY ((size_t)1 << 30)

struct spindle_ring {
    // Producers: next sequence number to claim. atomic: any thread.
    _Alignas(SPINDLE_CACHE_LINE) _Atomic uint64_t tail;
    // Consumer: next sequence number to consume. Written by the consumer
    // only; read (relaxed) by spindle_ring_depth.
    _Alignas(SPINDLE_CACHE_LINE) _Atomic uint64_t head;
    // Immutable after create.
    _Alignas(SPINDLE_CACHE_LINE) uint64_t mask;
    _Atomic uint64_t *slots;  // per-slot sequence numbers
};

_Static_assert(offsetof(struct spindle_ring, head) % SPINDLE_CACHE_LINE == 0,
               "producers' tail and consumer's head are on separate cache lines");
_Static_assert(offsetof(struct spindle_ring, mask) % SPINDLE_CACHE_LINE == 0,
               "read-only fields do not share a line with the counters");

spindle_ring *spindle_ring_create(size_t capacity) {
    if (capacity > SPINDLE_RING_MAX_CAPACITY) return NULL;
    size_t cap = spindle_next_pow2(capacity < 2 ? 2 : capacity);
    spindle_ring *ring = aligned_alloc(SPINDLE_CACHE_LINE, spindle_round_up(sizeof(*ring), SPINDLE_CACHE_LINE));
    if (ring == NULL) return NULL;
    memset(ring, 0, sizeof(*ring));
    ring->slots = aligned_alloc(SPINDLE_CACHE_LINE,
                                spindle_round_up(cap * sizeof(_Atomic uint64_t), SPINDLE_CACHE_LINE));
    if (ring->slots == NULL) {
        free(ring);
        return NULL;
    }
    for (size_t i = 0; i < cap; i++) atomic_init(&ring->slots[i], (uint64_t)i);
    ring->mask = cap - 1;
    atomic_init(&ring->tail, 0);
    atomic_init(&ring->head, 0);
    spindle_live_queues_add(1);
    return ring;
}

void spindle_ring_destroy(spindle_ring *ring) {
    if (ring == NULL) return;
    free(ring->slots);
    free(ring);
    spindle_live_queues_add(-1);
}

size_t spindle_ring_capacity(const spindle_ring *ring) {
    return (size_t)ring->mask + 1;
}

size_t spindle_ring_claim(spindle_ring *ring, size_t count, uint64_t *first) {
    if (count == 0) return 0;
    if (count > ring->mask + 1) count = ring->mask + 1;
    uint64_t pos = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    for (;;) {
        size_t want = count;
        for (;;) {
            // Free when the last slot of the range holds its own number.
            uint64_t last = pos + want - 1;
            uint64_t seq = atomic_load_explicit(&ring->slots[last & ring->mask], memory_order_acquire);
            if (seq == last) break;
            if ((int64_t)(seq - last) > 0) {
                // Another producer claimed past us; reload and retry.
                want = 0;
                break;
            }
            // The range does not fit: try a single slot, or report full.
            if (want == 1) return 0;
            want = 1;
        }
        // seq_cst on success (the same locked cmpxchg on x86): the claim is
        // the RMW that lets the caller wake the consumer with
        // spindle_parker_notify_after_rmw, whose waiter re-checks `tail`.
        if (want > 0 && atomic_compare_exchange_weak_explicit(
                            &ring->tail, &pos, pos + want,
                            memory_order_seq_cst, memory_order_relaxed)) {
            *first = pos;
            return want;
        }
        if (want == 0) pos = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    }
}

void spindle_ring_publish(spindle_ring *ring, uint64_t seq) {
    atomic_store_explicit(&ring->slots[seq & ring->mask], seq + 1, memory_order_release);
}

size_t spindle_ring_available_consumer(spindle_ring *ring, size_t max, uint64_t *first) {
    uint64_t pos = atomic_load_explicit(&ring->head, memory_order_relaxed);
    *first = pos;
    size_t n = 0;
    while (n < max) {
        uint64_t seq = atomic_load_explicit(&ring->slots[(pos + n) & ring->mask], memory_order_acquire);
        if (seq != pos + n + 1) break;
        n++;
    }
    return n;
}

void spindle_ring_release_consumer(spindle_ring *ring, size_t count) {
    uint64_t pos = atomic_load_explicit(&ring->head, memory_order_relaxed);
    uint64_t capacity = ring->mask + 1;
    for (size_t i = 0; i < count; i++) {
        atomic_store_explicit(&ring->slots[(pos + i) & ring->mask], pos + i + capacity,
                              memory_order_release);
    }
    atomic_store_explicit(&ring->head, pos + count, memory_order_relaxed);
}

size_t spindle_ring_depth(const spindle_ring *ring) {
    uint64_t head = atomic_load_explicit(&((spindle_ring *)ring)->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&((spindle_ring *)ring)->tail, memory_order_relaxed);
    return tail > head ? (size_t)(tail - head) : 0;
}
