// The parker: an event count on a Linux futex (a pthread condition variable
// elsewhere). Waking a sleeping thread costs ~13 us on the reference machine,
// so callers spin briefly on their condition before they prepare to wait;
// notify costs a single load when nobody sleeps.
#include "CSpindle.h"
#include "spindle_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#else
#include <pthread.h>
#include <time.h>
#endif

struct spindle_parker {
    // Bumped by every notify that finds a waiter; waiters sleep on it.
    _Alignas(SPINDLE_CACHE_LINE) _Atomic uint32_t epoch;
    // Number of threads between prepare and the end of wait/cancel.
    _Atomic uint32_t waiters;
#ifndef __linux__
    pthread_mutex_t lock;
    pthread_cond_t cond;
#endif
};

spindle_parker *spindle_parker_create(void) {
    spindle_parker *p = aligned_alloc(SPINDLE_CACHE_LINE, spindle_round_up(sizeof(*p), SPINDLE_CACHE_LINE));
    if (p == NULL) return NULL;
    memset(p, 0, sizeof(*p));
    atomic_init(&p->epoch, 0);
    atomic_init(&p->waiters, 0);
#ifndef __linux__
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond, NULL);
#endif
    return p;
}

void spindle_parker_destroy(spindle_parker *p) {
    if (p == NULL) return;
#ifndef __linux__
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
#endif
    free(p);
}

uint32_t spindle_parker_prepare(spindle_parker *p) {
    // seq_cst RMW: orders this registration before the caller's re-check of
    // its condition, against the notifier's write + load of `waiters`.
    atomic_fetch_add_explicit(&p->waiters, 1, memory_order_seq_cst);
    return atomic_load_explicit(&p->epoch, memory_order_seq_cst);
}

void spindle_parker_cancel(spindle_parker *p) {
    atomic_fetch_sub_explicit(&p->waiters, 1, memory_order_seq_cst);
}

void spindle_parker_wait(spindle_parker *p, uint32_t key, uint64_t timeout_ns) {
#ifdef __linux__
    struct timespec ts;
    struct timespec *tsp = NULL;
    if (timeout_ns > 0) {
        ts.tv_sec = (time_t)(timeout_ns / 1000000000u);
        ts.tv_nsec = (long)(timeout_ns % 1000000000u);
        tsp = &ts;
    }
    // Returns at once if epoch != key (a notify came after prepare).
    syscall(SYS_futex, (uint32_t *)&p->epoch, FUTEX_WAIT_PRIVATE, key, tsp, NULL, 0);
#else
    pthread_mutex_lock(&p->lock);
    if (atomic_load_explicit(&p->epoch, memory_order_seq_cst) == key) {
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
    atomic_fetch_sub_explicit(&p->waiters, 1, memory_order_seq_cst);
}

void spindle_parker_notify(spindle_parker *p) {
    // The fence orders the caller's condition write before the load of
    // `waiters` (Dekker with prepare's RMW): either we see the waiter, or it
    // sees the condition.
    atomic_thread_fence(memory_order_seq_cst);
    spindle_parker_notify_after_rmw(p);
}

void spindle_parker_notify_after_rmw(spindle_parker *p) {
    if (atomic_load_explicit(&p->waiters, memory_order_seq_cst) == 0) return;
    atomic_fetch_add_explicit(&p->epoch, 1, memory_order_seq_cst);
#ifdef __linux__
    syscall(SYS_futex, (uint32_t *)&p->epoch, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
#else
    pthread_mutex_lock(&p->lock);
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
#endif
}

void spindle_cpu_relax(void) {
    spindle_relax();
}
