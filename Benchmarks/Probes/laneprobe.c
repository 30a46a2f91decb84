// Probe for LANES.md: what a lane emit's protocol costs between two cores,
// in C, without the engine around it. One producer thread, the main thread
// consuming (spinning on the published count), 16-byte events, a ring of
// 4096. Modes: 0 = slot write + count store per event (a plain SPSC ring,
// published per event); 1 = + fetch_or(BUSY) on the count's word (the
// lanes' first version); 2 = + plain stores of a BUSY word on the
// producer's own line (the asymmetric-fence version); 3 = mode 2 without the
// count: each slot carries its sequence number, written after its payload
// (release), and the consumer polls the next slot's sequence (FastFlow's
// shape; 32-byte slots, so two to a line instead of four).
//   gcc -O2 -pthread -o laneprobe Benchmarks/Probes/laneprobe.c
//   ./laneprobe MODE [EVENTS]     (default 200000000)
// With -DLINGER=1 the consumer waits after each run as the engine's runner
// lingers (ScheduledLoop.runScheduling: 8 pauses, doubled while runs are
// under 32 events, up to 256; halved above 256, down to 16).
// Not built by SwiftPM (Benchmarks/Probes is no target).
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CAP 4096
#ifndef BACKOFF
#define BACKOFF 1
#endif
#ifndef LINGER
#define LINGER 0  // 1: the consumer lingers as the engine's runner does
#endif
#define BUSY (1ull << 63)
typedef struct { uint64_t a, b; } ev;
typedef struct { uint64_t a, b; _Atomic uint64_t seq; uint64_t pad; } sev;
static struct {
    _Alignas(64) _Atomic uint64_t word;
    _Alignas(64) _Atomic uint64_t head;
    _Alignas(64) _Atomic int closed;
    _Alignas(64) _Atomic int busy;
    _Alignas(64) _Atomic int sched;
    _Alignas(64) ev slots[CAP];
    _Alignas(64) sev sslots[CAP];
} L;
static uint64_t N = 200000000;
static int mode;
static int pauses = 8;
static void linger(uint64_t run) {
    if (!LINGER) return;
    if (run < 32) { pauses = pauses * 2 > 256 ? 256 : pauses * 2; }
    else if (run > 256) { pauses = pauses / 2 < 16 ? 16 : pauses / 2; }
    for (int k = 0; k < pauses; k++) __builtin_ia32_pause();
}
static uint64_t now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000ull + t.tv_nsec; }

static void *producer(void *x) {
    uint64_t tail = 0, cachedHead = 0;
    uint64_t wakes = 0;
    for (uint64_t i = 0; i < N; i++) {
        while (tail - cachedHead >= CAP) { cachedHead = atomic_load_explicit(&L.head, memory_order_acquire); __builtin_ia32_pause(); }
        if (mode == 1) {
            atomic_fetch_or_explicit(&L.word, BUSY, memory_order_seq_cst);
            if (atomic_load_explicit(&L.closed, memory_order_relaxed)) abort();
        }
        if (mode >= 2) {
            atomic_store_explicit(&L.busy, 1, memory_order_relaxed);
            atomic_signal_fence(memory_order_seq_cst);
            if (atomic_load_explicit(&L.closed, memory_order_relaxed)) abort();
        }
        if (mode == 3) {
            sev *slot = &L.sslots[tail & (CAP - 1)];
            slot->a = i; slot->b = i;
            tail++;
            atomic_store_explicit(&slot->seq, tail, memory_order_release);
        } else {
            L.slots[tail & (CAP - 1)] = (ev){i, i};
            tail++;
            atomic_store_explicit(&L.word, tail, memory_order_release);
        }
        if (mode >= 2) atomic_store_explicit(&L.busy, 0, memory_order_release);
        if (mode >= 1 && atomic_load_explicit(&L.sched, memory_order_relaxed) == 0) wakes++;
    }
    return (void *)wakes;
}

int main(int argc, char **argv) {
    mode = argc > 1 ? atoi(argv[1]) : 1;
    if (argc > 2) N = strtoull(argv[2], 0, 10);
    atomic_store(&L.sched, 2);
    pthread_t t;
    uint64_t start = now();
    pthread_create(&t, 0, producer, 0);
    uint64_t head = 0, sum = 0;
    while (mode == 3 && head < N) {
        // The next slot's sequence says whether it is written; take the run.
        uint64_t first = head;
        while (head < N && atomic_load_explicit(&L.sslots[head & (CAP - 1)].seq, memory_order_acquire) == head + 1) {
            sum += L.sslots[head & (CAP - 1)].a; head++;
        }
        if (head == first) { for (int k = 0; k < BACKOFF; k++) __builtin_ia32_pause(); continue; }
        atomic_store_explicit(&L.head, head, memory_order_release);
        linger(head - first);
    }
    while (head < N) {
        uint64_t w = atomic_load_explicit(&L.word, memory_order_acquire) & ~BUSY;
        if (w == head) { for (int k = 0; k < BACKOFF; k++) __builtin_ia32_pause(); continue; }
        uint64_t first = head;
        while (head < w) { sum += L.slots[head & (CAP - 1)].a; head++; }
        atomic_store_explicit(&L.head, head, memory_order_release);
        linger(head - first);
    }
    void *r; pthread_join(t, &r);
    double s = (now() - start) / 1e9;
    printf("mode %d (%s): %.1f M events/s (sum %llu)\n", mode, mode == 3 ? "plain busy stores, sequence in the slot" : mode == 2 ? "plain busy stores (membarrier design)" : mode ? "fetch_or + store" : "plain store", N / s / 1e6, (unsigned long long)(sum & 0xff));
    return 0;
}
