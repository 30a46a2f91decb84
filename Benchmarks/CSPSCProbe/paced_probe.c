// The paced probe, latency-100k's `bare` engine (see CSPSCProbe.h): latency-100k's workload with
// no engine in it. Plain C11 atomics; two pthreads released together by a
// spin barrier; both spin, neither ever sleeps.
#include "CSPSCProbe.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#define PACED_SLOTS 65536u  // a power of two: as the ring engine's capacity
#define PACED_LINE 64

typedef struct {
    // Written by the producer (once per event), read by the consumer.
    _Alignas(PACED_LINE) _Atomic uint64_t head;
    // Written by the consumer (once per event), read by the producer only
    // when the ring looks full.
    _Alignas(PACED_LINE) _Atomic uint64_t tail;
    _Alignas(PACED_LINE) _Atomic int ready;
    _Atomic int go;
    _Atomic int failed;
    uint64_t events;  // lead-in included
    uint64_t lead_in;
    uint64_t interval_ns;
    uint64_t *latencies;
    _Alignas(PACED_LINE) uint64_t stamps[PACED_SLOTS];
} paced_ring;

static uint64_t paced_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void paced_wait_for_go(paced_ring *r) {
    atomic_fetch_add_explicit(&r->ready, 1, memory_order_acq_rel);
    while (!atomic_load_explicit(&r->go, memory_order_acquire)) {}
}

// The same schedule as latency-100k's producer: spin on the clock until each
// event's slot on an absolute schedule, stamp, publish at once; behind
// schedule, emit back to back until on it again.
static void *paced_producer(void *argument) {
    paced_ring *r = argument;
    paced_wait_for_go(r);
    uint64_t head = 0;
    uint64_t cached_tail = 0;
    uint64_t slot_time = paced_now_ns();
    for (uint64_t i = 0; i < r->events; i++) {
        while (paced_now_ns() < slot_time) {}
        while (head - cached_tail == PACED_SLOTS) {
            cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
        }
        r->stamps[head & (PACED_SLOTS - 1)] = paced_now_ns();
        head++;
        atomic_store_explicit(&r->head, head, memory_order_release);
        slot_time += r->interval_ns;
    }
    return NULL;
}

// Spins on the producer's index and records now − stamp for every event, as
// latency-100k's feedback does right after each reduction.
static void *paced_consumer(void *argument) {
    paced_ring *r = argument;
    paced_wait_for_go(r);
    uint64_t tail = 0;
    uint64_t cached_head = 0;
    while (tail < r->events) {
        if (tail == cached_head) {
            cached_head = atomic_load_explicit(&r->head, memory_order_acquire);
            continue;
        }
        uint64_t stamp = r->stamps[tail & (PACED_SLOTS - 1)];
        uint64_t now = paced_now_ns();
        if (now < stamp) atomic_store_explicit(&r->failed, 1, memory_order_relaxed);
        if (tail >= r->lead_in) r->latencies[tail - r->lead_in] = now - stamp;
        tail++;
        atomic_store_explicit(&r->tail, tail, memory_order_release);
    }
    return NULL;
}

uint64_t cspsc_paced_run(uint64_t lead_in, uint64_t events, uint64_t interval_ns, uint64_t *latencies) {
    paced_ring *r = aligned_alloc(PACED_LINE, sizeof(paced_ring));
    if (r == NULL) return 0;
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    atomic_init(&r->ready, 0);
    atomic_init(&r->go, 0);
    atomic_init(&r->failed, 0);
    r->events = lead_in + events;
    r->lead_in = lead_in;
    r->interval_ns = interval_ns;
    r->latencies = latencies;
    pthread_t threads[2];
    if (pthread_create(&threads[0], NULL, paced_consumer, r) != 0) {
        free(r);
        return 0;
    }
    if (pthread_create(&threads[1], NULL, paced_producer, r) != 0) {
        // The consumer waits for events: give it none.
        r->events = 0;
        atomic_store_explicit(&r->go, 1, memory_order_release);
        pthread_join(threads[0], NULL);
        free(r);
        return 0;
    }
    while (atomic_load_explicit(&r->ready, memory_order_acquire) < 2) {}
    uint64_t started = paced_now_ns();
    atomic_store_explicit(&r->go, 1, memory_order_release);
    pthread_join(threads[0], NULL);
    pthread_join(threads[1], NULL);
    uint64_t elapsed = paced_now_ns() - started;
    bool failed = atomic_load_explicit(&r->failed, memory_order_relaxed);
    free(r);
    return failed ? 0 : (elapsed > 0 ? elapsed : 1);
}
