// What the two probes share: the clock, and a consumer and a producer thread
// released together by a spin gate. Private to the probes.
#ifndef PROBE_PAIR_H
#define PROBE_PAIR_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#define PROBE_LINE 64

static inline uint64_t probe_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/// The start gate: each thread checks in, then spins until it opens.
typedef struct {
    _Atomic int ready;
    _Atomic int go;
} probe_gate;

static inline void probe_gate_pass(probe_gate *gate) {
    atomic_fetch_add_explicit(&gate->ready, 1, memory_order_acq_rel);
    while (!atomic_load_explicit(&gate->go, memory_order_acquire)) {}
}

/// Starts `consumer`, then `producer`, on `argument`; opens `gate` once both
/// wait at it; joins both. Returns the time the gate opened, or 0 when a
/// thread could not be created. If only the consumer started, `*events` is
/// set to 0 before the gate opens, so that it finds nothing to wait for.
static inline uint64_t probe_run_pair(void *(*consumer)(void *), void *(*producer)(void *),
                                      void *argument, probe_gate *gate, uint64_t *events) {
    atomic_init(&gate->ready, 0);
    atomic_init(&gate->go, 0);
    pthread_t threads[2];
    if (pthread_create(&threads[0], NULL, consumer, argument) != 0) return 0;
    if (pthread_create(&threads[1], NULL, producer, argument) != 0) {
        *events = 0;
        atomic_store_explicit(&gate->go, 1, memory_order_release);
        pthread_join(threads[0], NULL);
        return 0;
    }
    while (atomic_load_explicit(&gate->ready, memory_order_acquire) < 2) {}
    uint64_t started = probe_now_ns();
    atomic_store_explicit(&gate->go, 1, memory_order_release);
    pthread_join(threads[0], NULL);
    pthread_join(threads[1], NULL);
    return started;
}

/// What a probe returns once its pair has run: the nanoseconds since
/// `started` (at least 1), or 0 when the run is void (a thread could not be
/// created, or `failed` was set).
static inline uint64_t probe_elapsed_unless_void(uint64_t started, _Atomic int *failed) {
    uint64_t elapsed = probe_now_ns() - started;
    if (started == 0 || atomic_load_explicit(failed, memory_order_relaxed)) return 0;
    return elapsed > 0 ? elapsed : 1;
}

#endif
