import Dispatch

/// A task executor on a `DispatchQueue`, so that the code of an async or
/// stream effect whose feedback names a queue (`on:`, `execute(on:)`) runs on
/// that queue — Spin's rule for every effect form — and not on the global
/// concurrent pool. Started with `Task(executorPreference:)`; code isolated
/// to an actor (e.g. `@MainActor`) still runs on its actor.
///
/// **Thread safety:** `enqueue` from any thread.
final class QueueTaskExecutor: TaskExecutor {
    let queue: DispatchQueue

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
