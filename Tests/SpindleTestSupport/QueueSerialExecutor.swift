import Dispatch

/// A Swift `SerialExecutor` over a serial dispatch queue: its jobs run on
/// the queue, one at a time, in order. For loops on
/// `SpinExecutor.serialExecutor(_:)`.
package final class QueueSerialExecutor: SerialExecutor {
    package let queue: DispatchQueue

    package init(_ queue: DispatchQueue) {
        self.queue = queue
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }
}
