// The parker: an event count on a Linux futex (a pthread condition variable
// elsewhere, and under SPINDLE_PORTABLE). Waking a sleeping thread costs
// ~13 us on the reference machine, so callers spin briefly on their
// condition before they prepare to wait;
// notify costs a single load when nobody sleeps, and one system call per
// sleep however many notifies arrive while the sleeper gets up.
#include "CSpindle.h"
#include "spindle_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#ifdef SPINDLE_LINUX
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#else
#include <pthread.h>
#include <time.h>
#endif

// Why two words. `registry` says who waits: the number of registered waiters
// (low 32 bits) in the current round (high 32 bits). A notify that finds
// waiters ends the round with one CAS, which unregisters all of them at once,
// and only that notify makes the system call; the notifies that follow see no
// waiter and cost one load. The futex sleeps on `wake_seq`, which each round-
// ending notify bumps: a futex word must be 32 bits, and waiting on the
// registry itself would wake every sleeper whenever another thread registers.
//
// No lost wake-up. A waiter reads `wake_seq`, then registers (seq_cst RMW),
// then re-checks its condition, then sleeps while `wake_seq` still holds the
// value it read. The notifier writes the condition, then (seq_cst fence)
// loads the registry. Either the notifier sees the registration, or the
// waiter's re-check sees the condition (Dekker). A notify that sees it ends
// the waiter's round, which unregisters the waiter, and then bumps
// `wake_seq`: that bump comes after the CAS, so after the registration, so
// after the waiter's read of `wake_seq`, and the waiter's futex wait returns
// at once or is woken by the wake that follows the bump.
//
// The read must come first. Read after registering, it could see the bump
// of the very notify that had just unregistered the waiter; if the waiter's
// re-check then found the condition false again (another thread took what
// that notify announced), the waiter would sleep on the new value, unregistered:
// every later notify would find no waiter and wake nobody, for good
// (parker.pml's broken variant parker-broken-late-seq).
//
// Leaving. A waiter that returns from the futex, or cancels, unregisters
// itself only if its round is still current (same high half); otherwise a
// notify already did. A round number would have to wrap 2^32 times while the
// waiter is between its wake and that check to fool it.
// Not line-aligned itself: `spindle_parker_create` gives a parker a line
// of its own; `spindle_parker_init` places one where its caller wants it
// (on a line it shares with what its wakers write beside it).
struct spindle_parker {
    _Atomic uint64_t registry;
    _Atomic uint32_t wake_seq;
    _Atomic uint64_t wakes;  // diagnostics: wake calls issued
#ifndef SPINDLE_LINUX
    pthread_mutex_t lock;
    pthread_cond_t cond;
#endif
};

#define REGISTRY_WAITERS(r) ((uint32_t)(r))
#define REGISTRY_ROUND(r) ((uint32_t)((r) >> 32))
#define ROUND_ONE ((uint64_t)1 << 32)

size_t spindle_parker_size(void) {
    return sizeof(spindle_parker);
}

spindle_parker *spindle_parker_init(void *memory) {
    spindle_parker *p = memory;
    memset(p, 0, sizeof(*p));
    atomic_init(&p->registry, 0);
    atomic_init(&p->wake_seq, 0);
    atomic_init(&p->wakes, 0);
#ifndef SPINDLE_LINUX
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond, NULL);
#endif
    return p;
}

void spindle_parker_deinit(spindle_parker *p) {
#ifndef SPINDLE_LINUX
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
#else
    (void)p;
#endif
}

spindle_parker *spindle_parker_create(void) {
    void *memory = aligned_alloc(SPINDLE_CACHE_LINE, spindle_round_up(sizeof(spindle_parker), SPINDLE_CACHE_LINE));
    if (memory == NULL) return NULL;
    return spindle_parker_init(memory);
}

void spindle_parker_destroy(spindle_parker *p) {
    if (p == NULL) return;
    spindle_parker_deinit(p);
    free(p);
}

// key: the registration's round (high 32 bits) and the `wake_seq` value read
// after registering (low 32 bits).
uint64_t spindle_parker_prepare(spindle_parker *p) {
    // Before registering (see "The read must come first" above).
    uint32_t seq = atomic_load_explicit(&p->wake_seq, memory_order_seq_cst);
    // seq_cst RMW: orders this registration before the caller's re-check of
    // its condition, against the notifier's write + fence + load.
    uint64_t registered = atomic_fetch_add_explicit(&p->registry, 1, memory_order_seq_cst) + 1;
    // Callers re-check their condition with plain (relaxed or acquire)
    // loads; the fence makes the Dekker argument hold for those too (free on
    // x86 after the locked add; needed on ARM). Once per sleep.
    atomic_thread_fence(memory_order_seq_cst);
    return ((uint64_t)REGISTRY_ROUND(registered) << 32) | seq;
}

void spindle_parker_cancel(spindle_parker *p, uint64_t key) {
    uint32_t round = (uint32_t)(key >> 32);
    uint64_t current = atomic_load_explicit(&p->registry, memory_order_seq_cst);
    // Still counted only while our round is current; a notify that ended the
    // round unregistered us with everyone else.
    while (REGISTRY_ROUND(current) == round) {
        if (atomic_compare_exchange_weak_explicit(&p->registry, &current, current - 1,
                                                  memory_order_seq_cst, memory_order_seq_cst)) {
            return;
        }
    }
}

void spindle_parker_wait(spindle_parker *p, uint64_t key, uint64_t timeout_ns) {
    uint32_t seq = (uint32_t)key;
#ifdef SPINDLE_LINUX
    struct timespec ts;
    struct timespec *tsp = NULL;
    if (timeout_ns > 0) {
        ts.tv_sec = (time_t)(timeout_ns / 1000000000u);
        ts.tv_nsec = (long)(timeout_ns % 1000000000u);
        tsp = &ts;
    }
    // Returns at once if wake_seq != seq (a round ended after prepare).
    syscall(SYS_futex, (uint32_t *)&p->wake_seq, FUTEX_WAIT_PRIVATE, seq, tsp, NULL, 0);
#else
    pthread_mutex_lock(&p->lock);
    if (atomic_load_explicit(&p->wake_seq, memory_order_seq_cst) == seq) {
        if (timeout_ns > 0) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            uint64_t ns = (uint64_t)ts.tv_nsec + timeout_ns;
            ts.tv_sec += (time_t)(ns / 1000000000u);
            ts.tv_nsec = (long)(ns % 1000000000u);
            pthread_cond_timedwait(&p->cond, &p->lock, &ts);
        } else {
            pthread_cond_wait(&p->cond, &p->lock);
        }
    }
    pthread_mutex_unlock(&p->lock);
#endif
    // Timed out or woke spuriously: still registered unless a notify ended
    // the round.
    spindle_parker_cancel(p, key);
}

void spindle_parker_notify(spindle_parker *p) {
    // The fence orders the caller's condition write before the load of the
    // registry (Dekker with prepare's RMW): either we see the waiter, or it
    // sees the condition.
    atomic_thread_fence(memory_order_seq_cst);
    spindle_parker_notify_after_rmw(p);
}

void spindle_parker_notify_after_rmw(spindle_parker *p) {
    uint64_t current = atomic_load_explicit(&p->registry, memory_order_seq_cst);
    for (;;) {
        if (REGISTRY_WAITERS(current) == 0) return;
        // End the round: next round number, nobody registered.
        uint64_t next = (current & ~(uint64_t)UINT32_MAX) + ROUND_ONE;
        if (atomic_compare_exchange_weak_explicit(&p->registry, &current, next,
                                                  memory_order_seq_cst, memory_order_seq_cst)) {
            break;
        }
        // Lost to another notify (which wakes them) or a (un)registration:
        // look again.
    }
    atomic_fetch_add_explicit(&p->wake_seq, 1, memory_order_seq_cst);
    atomic_fetch_add_explicit(&p->wakes, 1, memory_order_relaxed);
#ifdef SPINDLE_LINUX
    syscall(SYS_futex, (uint32_t *)&p->wake_seq, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
#else
    pthread_mutex_lock(&p->lock);
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
#endif
}

bool spindle_parker_has_waiters(const spindle_parker *p) {
    uint64_t current = atomic_load_explicit(&((spindle_parker *)p)->registry, memory_order_seq_cst);
    return REGISTRY_WAITERS(current) != 0;
}

uint64_t spindle_parker_wake_count(const spindle_parker *p) {
    return atomic_load_explicit(&((spindle_parker *)p)->wakes, memory_order_relaxed);
}

void spindle_cpu_relax(void) {
    spindle_relax();
}

uint64_t spindle_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
