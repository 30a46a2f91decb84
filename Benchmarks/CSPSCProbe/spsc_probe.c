// The SPSC-ring limit probe (see CSPSCProbe.h). Plain C11 atomics; two
// pthreads released together by a spin barrier.
#include "CSPSCProbe.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#define RING_SLOTS 4096u  // a power of two
#define PUBLISH_EVERY 256u
#define LINE 64

typedef struct {
    uint64_t sequence;
    uint64_t payload;
} event16;

typedef struct {
    // Written by the producer, read by the consumer.
    _Alignas(LINE) _Atomic uint64_t head;
    // Written by the consumer, read by the producer.
    _Alignas(LINE) _Atomic uint64_t tail;
    _Alignas(LINE) _Atomic int ready;
    _Atomic int go;
    _Atomic int failed;
    uint64_t events;
    uint64_t finished_ns;
    _Alignas(LINE) event16 slots[RING_SLOTS];
} ring;

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void wait_for_go(ring *r) {
    atomic_fetch_add_explicit(&r->ready, 1, memory_order_acq_rel);
    while (!atomic_load_explicit(&r->go, memory_order_acquire)) {}
}

static void *producer(void *argument) {
    ring *r = argument;
    wait_for_go(r);
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
    wait_for_go(r);
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
    r->finished_ns = now_ns();
    if (!ok) atomic_store_explicit(&r->failed, 1, memory_order_relaxed);
    return NULL;
}

uint64_t cspsc_probe_run(uint64_t events) {
    ring *r = aligned_alloc(LINE, sizeof(ring));
    if (r == NULL) return 0;
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    atomic_init(&r->ready, 0);
    atomic_init(&r->go, 0);
    atomic_init(&r->failed, 0);
    r->events = events;
    r->finished_ns = 0;
    pthread_t threads[2];
    if (pthread_create(&threads[0], NULL, consumer, r) != 0) {
        free(r);
        return 0;
    }
    if (pthread_create(&threads[1], NULL, producer, r) != 0) {
        // Release the consumer with nothing to read... it would wait forever
        // for events: give it none.
        r->events = 0;
        atomic_store_explicit(&r->go, 1, memory_order_release);
        pthread_join(threads[0], NULL);
        free(r);
        return 0;
    }
    while (atomic_load_explicit(&r->ready, memory_order_acquire) < 2) {}
    uint64_t started = now_ns();
    atomic_store_explicit(&r->go, 1, memory_order_release);
    pthread_join(threads[0], NULL);
    pthread_join(threads[1], NULL);
    uint64_t elapsed = atomic_load_explicit(&r->failed, memory_order_relaxed) ? 0 : r->finished_ns - started;
    free(r);
    return elapsed;
}
