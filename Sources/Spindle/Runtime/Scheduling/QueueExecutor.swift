import Dispatch

/// Runs a loop on a serial `DispatchQueue` (`SpinExecutor.queue(_:)`, e.g.
/// the main queue for a UI loop): one work item per scheduling, never one per
/// event; a slice runs at most the loop's budget, then the loop is queued
/// again behind whatever else the queue has.
///
/// > Important: The queue must be serial. A concurrent queue would still
/// > never run a loop twice at once (the scheduling protocol forbids it), but
/// > the loop's feedbacks would not be serialized with the queue's other work.
final class QueueExecutor: LoopExecutor {
    let queue: DispatchQueue

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    var name: String { "queue '\(queue.label)'" }

    func register(_ loop: ScheduledLoop) throws(SpinExecutorError) {}

    func loopFinished(_ loop: ScheduledLoop) {}

    func schedule(_ loop: ScheduledLoop) {
        queue.async { [self] in
            // Never lingers: the queue's other work (a UI's) comes first.
            if case .reschedule = loop.runScheduling(linger: { false }) {
                schedule(loop)
            }
        }
    }
}
