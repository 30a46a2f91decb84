import Dispatch
import Spindle

/// A task executor that runs nothing by itself: jobs wait in a FIFO queue
/// until the runner runs them, one at a time, on the test's own thread.
///
/// Effect runs are started with `Task(executorPreference:)` on this
/// executor, so their code, and the code of the structured child tasks they
/// start (`async let`, task groups), runs only inside
/// ``runNext()`` — never concurrently with the test, and never while the
/// test is not asking for it. A continuation resumed from another thread
/// (a real timer, real I/O) enqueues its job here too; it runs the next time
/// the runner drains the queue.
///
/// Once ``retire()`` has been called (the runner stopped or went away), jobs
/// that still arrive are run on a global dispatch queue, so a run that
/// outlives its runner still ends instead of waiting forever.
///
/// **Thread safety:** `enqueue` from any thread; ``runNext()`` from the
/// runner's caller (one thread at a time).
final class ManualExecutor: TaskExecutor {
    /// A task's job, or work the engine dispatched (a route's drain).
    private enum Job: Sendable {
        case task(UnownedJob)
        case work(@Sendable () -> Void)
    }

    private struct Queue: Sendable {
        var jobs: [Job] = []
        var head = 0
        var retired = false
    }

    // protected by lock: the jobs waiting to run, FIFO.
    private let queue = Lock(Queue())
    /// Signalled once per enqueued job, so ``waitForJob(timeout:)`` can block.
    private let arrivals = DispatchSemaphore(value: 0)

    func enqueue(_ job: consuming ExecutorJob) {
        add(.task(UnownedJob(job)))
    }

    /// Queues `work` (what the engine would run on a dispatch queue) to
    /// run in turn with the tasks' jobs.
    func enqueue(work: @escaping @Sendable () -> Void) {
        add(.work(work))
    }

    private func add(_ job: Job) {
        let retired = queue.withLock { queue -> Bool in
            if queue.retired { return true }
            queue.jobs.append(job)
            return false
        }
        if retired {
            DispatchQueue.global().async { self.run(job) }
        } else {
            arrivals.signal()
        }
    }

    private func run(_ job: Job) {
        switch job {
        case .task(let job): job.runSynchronously(on: asUnownedTaskExecutor())
        case .work(let work): work()
        }
    }

    /// Runs the oldest queued job on the calling thread.
    /// - Returns: false when no job was queued.
    func runNext() -> Bool {
        let next = queue.withLock { queue -> Job? in
            guard queue.head < queue.jobs.count else { return nil }
            let job = queue.jobs[queue.head]
            queue.head += 1
            if queue.head == queue.jobs.count {
                queue.jobs.removeAll(keepingCapacity: true)
                queue.head = 0
            }
            return job
        }
        guard let next else { return false }
        run(next)
        return true
    }

    /// The number of jobs waiting to run.
    var queuedCount: Int {
        queue.withLock { $0.jobs.count - $0.head }
    }

    /// Blocks the calling thread until a job is enqueued or `timeout` passes.
    /// - Returns: true when a job arrived (it may already have been run).
    func waitForJob(timeout: Duration) -> Bool {
        let nanoseconds = max(0, timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)
        return arrivals.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .success
    }

    /// From now on, jobs run on a global queue as they arrive (see the type's
    /// discussion); the jobs still queued are run there too.
    func retire() {
        let left = queue.withLock { queue -> [Job] in
            queue.retired = true
            let left = Array(queue.jobs[queue.head...])
            queue.jobs.removeAll()
            queue.head = 0
            return left
        }
        for job in left {
            DispatchQueue.global().async { self.run(job) }
        }
    }
}
