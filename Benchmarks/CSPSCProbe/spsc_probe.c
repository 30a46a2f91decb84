// The SPSC-ring limit probe (see CSPSCProbe.h). Plain C11 atomics; two
// pthreads released together by a spin barrier.
#include "CSPSCProbe.h"
#include "probe_pair.h"

#include <stdbool.h>
#include <stdlib.h>

#define RING_SLOTS 4096u  // a power of two
#define PUBLISH_EVERY 256u
#define LINE PROBE_LINE

typedef struct {
    uint64_t sequence;
    uint64_t payload;
} event16;

typedef struct {
    // Written by the producer, read by the consumer.
    _Alignas(LINE) _Atomic uint64_t head;
    // Written by the consumer, read by the producer.
    _Alignas(LINE) _Atomic uint64_t tail;
    _Alignas(LINE) probe_gate gate;
    _Atomic int failed;
    uint64_t events;
    uint64_t finished_ns;
    _Alignas(LINE) event16 slots[RING_SLOTS];
} ring;

static void *producer(void *argument) {
    ring *r = argument;
    probe_gate_pass(&r->gate);
    uint64_t head = 0;
    uint64_t cached_tail = 0;
    uint64_t unpublished = 0;
    for (uint64_t i = 0; i < r->events; i++) {
        // Full: publish what is written, then wait for the consumer.
        while (head - cached_tail == RING_SLOTS) {
            if (unpublished) {
                atomic_store_explicit(&r->head, head, memory_order_release);
                unpublished = 0;
            }
            cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
        }
        event16 *slot = &r->slots[head & (RING_SLOTS - 1)];
        slot->sequence = i;
        slot->payload = i * 2654435761u;
        head++;
        if (++unpublished == PUBLISH_EVERY) {
            atomic_store_explicit(&r->head, head, memory_order_release);
            unpublished = 0;
        }
    }
    atomic_store_explicit(&r->head, head, memory_order_release);
    return NULL;
}

static void *consumer(void *argument) {
    ring *r = argument;
    probe_gate_pass(&r->gate);
    uint64_t tail = 0;
    uint64_t cached_head = 0;
    uint64_t unreleased = 0;
    bool ok = true;
    while (tail < r->events) {
        if (tail == cached_head) {
            if (unreleased) {
                atomic_store_explicit(&r->tail, tail, memory_order_release);
                unreleased = 0;
            }
            cached_head = atomic_load_explicit(&r->head, memory_order_acquire);
            continue;
        }
        const event16 *slot = &r->slots[tail & (RING_SLOTS - 1)];
        ok &= slot->sequence == tail && slot->payload == tail * 2654435761u;
        tail++;
        if (++unreleased == PUBLISH_EVERY) {
            atomic_store_explicit(&r->tail, tail, memory_order_release);
            unreleased = 0;
        }
    }
    r->finished_ns = probe_now_ns();
    if (!ok) atomic_store_explicit(&r->failed, 1, memory_order_relaxed);
    return NULL;
}

uint64_t cspsc_probe_run(uint64_t events) {
    ring *r = aligned_alloc(LINE, sizeof(ring));
    if (r == NULL) return 0;
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    atomic_init(&r->failed, 0);
    r->events = events;
    r->finished_ns = 0;
    uint64_t started = probe_run_pair(consumer, producer, r, &r->gate, &r->events);
    bool void_run = started == 0 || atomic_load_explicit(&r->failed, memory_order_relaxed);
    uint64_t elapsed = void_run ? 0 : r->finished_ns - started;
    free(r);
    return elapsed;
}
