// CSpindle: Scheduling (executors' ready queue, per-loop task node).
// One part of the module: CSpindle.h includes every part and gives the
// overview and the naming ladder.
#ifndef SPINDLE_SCHED_H
#define SPINDLE_SCHED_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// MARK: - Scheduling (executors' ready queue, per-loop task node)

/// A loop's scheduling node: the intrusive link that puts it on a ready
/// queue, and the node of its one deferred grace period (stop). The loop's
/// scheduling state itself is a Swift atomic (see PROTOCOL.md beside the
/// Swift scheduling code); only the idle -> scheduled edge pushes a task, so
/// a task is on at most one ready queue at a time.
typedef struct spindle_task spindle_task;

/// The size of a task (a multiple of 8; 8-byte alignment suffices), so the
/// loop can keep it in an allocation of its own.
size_t spindle_task_size(void);

/// Initializes a task in `memory` (spindle_task_size() bytes, 8-aligned),
/// carrying `context` (the loop; not retained), and returns it. Any thread.
spindle_task *spindle_task_init(void *memory, void *context);

/// Ends a task's life (the memory is the caller's to free). It must not be on
/// a ready queue nor have a grace period pending. No other thread may touch it.
void spindle_task_deinit(spindle_task *task);

/// The task's context. Any thread.
void *spindle_task_context(spindle_task *task);

/// Starts loading the lines a runner touches first: `before` bytes before
/// the task and the task (the loop's words), and `object_bytes` of its
/// context (the loop object). A hint; any thread that holds the task.
void spindle_task_prefetch(spindle_task *task, size_t before, size_t object_bytes);

/// Sets the context, once, before the task is visible to another thread
/// (Swift creates the task before the object it points back to).
void spindle_task_set_context(spindle_task *task, void *context);

/// Active processors (sysconf), at least 1. Any thread.
long spindle_active_processors(void);

/// Calls `callback(context)` on Spindle's grace thread once every emit
/// gate section (`spindle_gate_enter`) open at the time of this call has
/// exited (on liburcu's call_rcu thread, 10 ms later, if the grace thread
/// could not be created). At most once per task. Any thread, outside a gate
/// section; never blocks (tasks waiting together share a grace period).
/// Ordering: everything the caller did before this call happens-before the
/// callback.
void spindle_task_after_grace_period(spindle_task *task, void (*callback)(void *context));

/// Tasks initialized and not deinitialized, process-wide (leak checks). Any thread.
long spindle_live_tasks(void);

/// An unbounded ready queue of tasks: many pushers, many poppers.
///
/// Concurrency table:
///
///   | operation   | push | pop | is_empty |
///   | push  (any) | yes  | yes |   yes    |
///   | pop   (any) | yes  | yes |   yes    |
///   pop serializes poppers on an internal mutex; push is wait-free.
typedef struct spindle_runq spindle_runq;

/// Creates a ready queue. NULL on exhaustion.
spindle_runq *spindle_runq_create(void);

/// Frees a ready queue. It must be empty; no other thread may touch it.
void spindle_runq_destroy(spindle_runq *queue);

/// Appends `task`, which must not be on any queue. Any thread; wait-free; a
/// full barrier (liburcu's exchange), so a parker notify may follow with
/// `spindle_parker_notify_after_rmw`.
/// Ordering: the pusher's writes happen-before the popper's return.
void spindle_runq_push(spindle_runq *queue, spindle_task *task);

/// Removes and returns the oldest task, or NULL when the queue is empty.
/// Any thread; poppers are serialized on a mutex (never held while user code
/// runs); does not wait for an empty queue.
spindle_task *spindle_runq_pop(spindle_runq *queue);

/// True when no task is queued (a snapshot). Any thread; two loads.
bool spindle_runq_is_empty(spindle_runq *queue);

#ifdef __cplusplus
}
#endif

#endif // SPINDLE_SCHED_H
