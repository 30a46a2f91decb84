// The paced probe, latency-100k's `bare` engine (see CSPSCProbe.h): the
// scenario's workload with no engine in it. Plain C11 atomics; two pthreads
// released together by a spin gate; both spin, neither ever sleeps.
#include "CSPSCProbe.h"
#include "probe_pair.h"

#include <stdbool.h>
#include <stdlib.h>

#define PACED_SLOTS 65536u  // a power of two: as the ring engine's capacity

typedef struct {
    // Written by the producer (once per event), read by the consumer.
    _Alignas(PROBE_LINE) _Atomic uint64_t head;
    // Written by the consumer (once per event), read by the producer only
    // when the ring looks full.
    _Alignas(PROBE_LINE) _Atomic uint64_t tail;
    _Alignas(PROBE_LINE) probe_gate gate;
    _Atomic int failed;
    uint64_t events;  // lead-in included
    uint64_t lead_in;
    uint64_t interval_ns;
    uint64_t *latencies;
    _Alignas(PROBE_LINE) uint64_t stamps[PACED_SLOTS];
} paced_ring;

// The same schedule as latency-100k's producer: spin on the clock until each
// event's slot on an absolute schedule, stamp, publish at once; behind
// schedule, emit back to back until on it again.
static void *paced_producer(void *argument) {
    paced_ring *r = argument;
    probe_gate_pass(&r->gate);
    uint64_t head = 0;
    uint64_t cached_tail = 0;
    uint64_t slot_time = probe_now_ns();
    for (uint64_t i = 0; i < r->events; i++) {
        while (probe_now_ns() < slot_time) {}
        while (head - cached_tail == PACED_SLOTS) {
            cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
        }
        r->stamps[head & (PACED_SLOTS - 1)] = probe_now_ns();
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
    probe_gate_pass(&r->gate);
    uint64_t tail = 0;
    uint64_t cached_head = 0;
    while (tail < r->events) {
        if (tail == cached_head) {
            cached_head = atomic_load_explicit(&r->head, memory_order_acquire);
            continue;
        }
        uint64_t stamp = r->stamps[tail & (PACED_SLOTS - 1)];
        uint64_t now = probe_now_ns();
        if (now < stamp) atomic_store_explicit(&r->failed, 1, memory_order_relaxed);
        if (tail >= r->lead_in) r->latencies[tail - r->lead_in] = now - stamp;
        tail++;
        atomic_store_explicit(&r->tail, tail, memory_order_release);
    }
    return NULL;
}

uint64_t cspsc_paced_run(uint64_t lead_in, uint64_t events, uint64_t interval_ns, uint64_t *latencies) {
    paced_ring *r = aligned_alloc(PROBE_LINE, sizeof(paced_ring));
    if (r == NULL) return 0;
    atomic_init(&r->head, 0);
    atomic_init(&r->tail, 0);
    atomic_init(&r->failed, 0);
    r->events = lead_in + events;
    r->lead_in = lead_in;
    r->interval_ns = interval_ns;
    r->latencies = latencies;
    uint64_t started = probe_run_pair(paced_consumer, paced_producer, r, &r->gate, &r->events);
    uint64_t result = probe_elapsed_unless_void(started, &r->failed);
    free(r);
    return result;
}
