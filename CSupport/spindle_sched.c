// The executors' ready queue and the per-loop task node, on liburcu.
//
// Why this shape:
// - A loop is pushed on a ready queue only on its idle -> scheduled edge
//   (see Sources/Spindle/Runtime/Scheduling/Model/PROTOCOL.md), so it is on
//   at most one queue at a time and its queue link can live inside the loop
//   (an intrusive node): scheduling allocates nothing.
// - Producers push from any thread: liburcu's wfcqueue enqueue is one
//   exchange, wait-free. Pool threads pop under a mutex of their own (the
//   wfcqueue dequeue needs mutual exclusion between dequeuers, and with a
//   handful of pool threads a mutex is cheaper than anything cleverer). We
//   use the _nonblocking dequeue: the blocking one sleeps 10 ms when it meets
//   a producer mid-enqueue.
// - Stop needs a grace period (every emit that missed `closed` has finished
//   enqueuing) before the final drain. synchronize_rcu would block an
//   executor thread for that long; a grace thread of our own (below) takes
//   every stop waiting, runs one synchronize_rcu for all of them (a few
//   microseconds when no emit is inside the gate) and then their callbacks.
//   Not liburcu's call_rcu thread: it sleeps 10 ms after each wake-up to let
//   callbacks pile up, which made every stop() take at least 10 ms. call_rcu
//   stays the fallback when the grace thread cannot be created.
#include <urcu/urcu-bp.h>
#include <urcu/wfcqueue.h>
#include <urcu/compiler.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "CSpindle.h"
#include "spindle_internal.h"

struct spindle_task {
    struct cds_wfcq_node link;          // ready-queue link; owned by the queue while pushed
    union {
        struct rcu_head rcu;            // call_rcu node (the fallback); used once, by the stop
        spindle_task *grace_next;       // the grace thread's list; used once, by the stop
    };
    void *context;                      // set once, before the task is shared
    void (*grace_callback)(void *);     // set once, before call_rcu
};

struct spindle_runq {
    // Producers exchange the tail: its own cache line.
    _Alignas(SPINDLE_CACHE_LINE) struct cds_wfcq_tail tail;
    // Pool threads dequeue from the head, one at a time (pop_lock).
    _Alignas(SPINDLE_CACHE_LINE) struct __cds_wfcq_head head;
    pthread_mutex_t pop_lock;
};

_Static_assert(offsetof(struct spindle_runq, head) % SPINDLE_CACHE_LINE == 0,
               "the producers' tail and the consumers' head are on separate cache lines");

static _Atomic long live_tasks = 0;

size_t spindle_task_size(void) { return sizeof(spindle_task); }

spindle_task *spindle_task_init(void *memory, void *context) {
    spindle_task *task = memory;
    memset(task, 0, sizeof(*task));
    cds_wfcq_node_init(&task->link);
    task->context = context;
    atomic_fetch_add_explicit(&live_tasks, 1, memory_order_relaxed);
    return task;
}

void spindle_task_deinit(spindle_task *task) {
    if (task == NULL) return;
    atomic_fetch_sub_explicit(&live_tasks, 1, memory_order_relaxed);
}

void *spindle_task_context(spindle_task *task) { return task->context; }

void spindle_task_prefetch(spindle_task *task, size_t before, size_t object_bytes) {
    const char *words = (const char *)task - before;
    for (size_t offset = 0; offset < before + sizeof(*task); offset += 64) __builtin_prefetch(words + offset, 1, 3);
    const char *object = (const char *)task->context;
    for (size_t offset = 0; offset < object_bytes; offset += 64) __builtin_prefetch(object + offset, 0, 3);
}

void spindle_task_set_context(spindle_task *task, void *context) { task->context = context; }

long spindle_active_processors(void) {
    long count = sysconf(_SC_NPROCESSORS_ONLN);
    return count > 0 ? count : 1;
}

long spindle_live_tasks(void) { return atomic_load_explicit(&live_tasks, memory_order_relaxed); }

spindle_runq *spindle_runq_create(void) {
    spindle_runq *q = aligned_alloc(SPINDLE_CACHE_LINE, spindle_round_up(sizeof(*q), SPINDLE_CACHE_LINE));
    if (q == NULL) return NULL;
    memset(q, 0, sizeof(*q));
    __cds_wfcq_init(&q->head, &q->tail);
    pthread_mutex_init(&q->pop_lock, NULL);
    return q;
}

void spindle_runq_destroy(spindle_runq *q) {
    if (q == NULL) return;
    pthread_mutex_destroy(&q->pop_lock);
    free(q);
}

void spindle_runq_push(spindle_runq *q, spindle_task *task) {
    cds_wfcq_node_init(&task->link);
    // TSan cannot see liburcu's inline-asm exchange: publish the edge from
    // everything the pusher did to the popper's run.
    SPINDLE_TSAN_RELEASE(task);
    (void)cds_wfcq_enqueue(&q->head, &q->tail, &task->link);
}

spindle_task *spindle_runq_pop(spindle_runq *q) {
    if (cds_wfcq_empty(&q->head, &q->tail)) return NULL;
    pthread_mutex_lock(&q->pop_lock);
    struct cds_wfcq_node *node;
    unsigned attempt = 0;
    for (;;) {
        node = __cds_wfcq_dequeue_nonblocking(&q->head, &q->tail);
        if (node != CDS_WFCQ_WOULDBLOCK) break;
        // A producer is between its tail exchange and its link store: a few
        // instructions from done unless preempted; spin, then yield.
        if (attempt < 10) {
            for (unsigned i = 0; i < (1u << attempt); i++) spindle_relax();
        } else {
            sched_yield();
        }
        attempt++;
    }
    pthread_mutex_unlock(&q->pop_lock);
    if (node == NULL) return NULL;
    spindle_task *task = caa_container_of(node, spindle_task, link);
    SPINDLE_TSAN_ACQUIRE(task);
    return task;
}

bool spindle_runq_is_empty(spindle_runq *q) {
    return cds_wfcq_empty(&q->head, &q->tail);
}

static void grace_trampoline(struct rcu_head *head) {
    spindle_task *task = caa_container_of(head, spindle_task, rcu);
    SPINDLE_TSAN_ACQUIRE(task);
    task->grace_callback(task->context);
}

// The grace thread's work: tasks whose stop waits for a grace period, a
// stack (pushed by any thread, taken whole by the grace thread).
static _Atomic(spindle_task *) grace_pending;
static spindle_parker *grace_parker;
static bool grace_thread_started;
static pthread_once_t grace_once = PTHREAD_ONCE_INIT;

static void *grace_thread_main(void *unused) {
    (void)unused;
    spindle_thread_set_name("spindle-grace");
    for (;;) {
        spindle_task *task = atomic_exchange_explicit(&grace_pending, NULL, memory_order_acquire);
        if (task == NULL) {
            uint64_t key = spindle_parker_prepare(grace_parker);
            if (atomic_load_explicit(&grace_pending, memory_order_seq_cst) != NULL) {
                spindle_parker_cancel(grace_parker, key);
            } else {
                spindle_parker_wait(grace_parker, key, 0);
            }
            continue;
        }
        // Every task was pushed after its loop closed its gate: a grace
        // period that starts now covers every emit that missed `closed`.
        urcu_bp_synchronize_rcu();
        while (task) {
            spindle_task *next = task->grace_next;
            SPINDLE_TSAN_ACQUIRE(task);
            task->grace_callback(task->context);
            task = next;
        }
    }
    return NULL;
}

static void grace_thread_start(void) {
    grace_parker = spindle_parker_create();
    if (grace_parker == NULL) return;
    pthread_attr_t attributes;
    if (pthread_attr_init(&attributes) != 0) return;
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attributes, 256 * 1024);
    pthread_t thread;
    grace_thread_started = pthread_create(&thread, &attributes, grace_thread_main, NULL) == 0;
    pthread_attr_destroy(&attributes);
}

void spindle_task_after_grace_period(spindle_task *task, void (*callback)(void *context)) {
    task->grace_callback = callback;
    // The caller's writes (and `closed`) happen-before the callback: the
    // push releases, the grace thread's take acquires. TSan is told too,
    // for the call_rcu fallback, whose queue it cannot see.
    SPINDLE_TSAN_RELEASE(task);
    pthread_once(&grace_once, grace_thread_start);
    if (!grace_thread_started) {
        // No thread (the system refused one): liburcu's call_rcu thread,
        // 10 ms slower per stop but never lost.
        urcu_bp_call_rcu(&task->rcu, grace_trampoline);
        return;
    }
    spindle_task *head = atomic_load_explicit(&grace_pending, memory_order_relaxed);
    do {
        task->grace_next = head;
    } while (!atomic_compare_exchange_weak_explicit(&grace_pending, &head, task, memory_order_seq_cst,
                                                    memory_order_relaxed));
    // A non-empty stack was not taken yet: its taker will find this task.
    if (head == NULL) spindle_parker_notify_after_rmw(grace_parker);
}
