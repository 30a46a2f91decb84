// The futex probes, the latency-sporadic scenarios' `futex` and
// `futex-one-wake` engines (see CSPSCProbe.h): the limit of a round trip to a
// parked thread. Two wake-ups (or one, with the producer polling for the
// answer) through Linux futexes and nothing else: no queue, no engine.
#include "CSPSCProbe.h"
#include "probe_pair.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct {
    // Written by the producer: the number of the request it made.
    _Alignas(PROBE_LINE) _Atomic uint32_t request;
    // Written by the consumer: the number of the request it answered.
    _Alignas(PROBE_LINE) _Atomic uint32_t answer;
    _Alignas(PROBE_LINE) probe_gate gate;
    _Atomic int failed;
    // The producer polls for the answer instead of sleeping on it, and the
    // consumer wakes nobody: one wake-up per round trip.
    int polls;
    uint64_t events;
    uint64_t pause_ns;
    uint64_t *latencies;
} futex_pair;

static void futex_wait(_Atomic uint32_t *word, uint32_t seen) {
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word) {
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void pause_for(uint64_t ns) {
    struct timespec t = {.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &t, &t) == EINTR) {}
}

// Sleeps, stamps, writes the next request and wakes the consumer, then
// sleeps on (or polls) the answer until it is this request's.
static void *futex_producer(void *argument) {
    futex_pair *p = argument;
    probe_gate_pass(&p->gate);
    for (uint32_t i = 1; i <= p->events; i++) {
        if (p->pause_ns > 0) pause_for(p->pause_ns);
        uint64_t sent = probe_now_ns();
        atomic_store_explicit(&p->request, i, memory_order_release);
        futex_wake(&p->request);
        uint32_t seen;
        while ((seen = atomic_load_explicit(&p->answer, memory_order_acquire)) != i) {
            if (!p->polls) futex_wait(&p->answer, seen);
        }
        p->latencies[i - 1] = probe_now_ns() - sent;
    }
    return NULL;
}

// Sleeps on the request until a new one comes, answers it and wakes the
// producer (unless it polls).
static void *futex_consumer(void *argument) {
    futex_pair *p = argument;
    probe_gate_pass(&p->gate);
    for (uint32_t i = 1; i <= p->events; i++) {
        uint32_t seen;
        while ((seen = atomic_load_explicit(&p->request, memory_order_acquire)) != i) {
            if (seen > i) atomic_store_explicit(&p->failed, 1, memory_order_relaxed);
            futex_wait(&p->request, seen);
        }
        atomic_store_explicit(&p->answer, i, memory_order_release);
        if (!p->polls) futex_wake(&p->answer);
    }
    return NULL;
}

static uint64_t futex_run(uint64_t events, uint64_t pause_ns, int polls, uint64_t *latencies) {
    if (events == 0 || events > UINT32_MAX) return 0;
    futex_pair *p = aligned_alloc(PROBE_LINE, sizeof(futex_pair));
    if (p == NULL) return 0;
    atomic_init(&p->request, 0);
    atomic_init(&p->answer, 0);
    atomic_init(&p->failed, 0);
    p->polls = polls;
    p->events = events;
    p->pause_ns = pause_ns;
    p->latencies = latencies;
    uint64_t started = probe_run_pair(futex_consumer, futex_producer, p, &p->gate, &p->events);
    uint64_t result = probe_elapsed_unless_void(started, &p->failed);
    free(p);
    return result;
}

uint64_t cfutex_sporadic_run(uint64_t events, uint64_t pause_ns, uint64_t *latencies) {
    return futex_run(events, pause_ns, 0, latencies);
}

uint64_t cfutex_one_wake_run(uint64_t events, uint64_t pause_ns, uint64_t *latencies) {
    return futex_run(events, pause_ns, 1, latencies);
}
