import DequeModule

/// The pure-Swift comparison queue: a lock (pthread mutex) around a `Deque`, drained in
/// batches by swapping the whole deque out under one lock acquisition (the
/// fastest plain-Swift MPSC design we know; no dispatch per event).
///
/// The engine around it (reducer thread, parking, feedback delivery) is the
/// same as for the C queues, so the benchmarks compare queues, not engines.
///
/// Thread safety: `tryEnqueue` from any thread; `drain` on the consumer only.
final class BaselineQueue<Event: Sendable>: EventQueue {
    private let shared = Lock<Deque<Event>>([])
    // Reducer thread only: the batch taken out of `shared`, and its count.
    nonisolated(unsafe) private var batch = Deque<Event>()

    init() {}

    @inline(__always)
    func tryEnqueue(_ event: Event) -> Bool {
        shared.withLock { $0.append(event) }
        return true
    }

    func drain(max: Int, _ body: (consuming Event) -> Void) -> Int {
        if batch.isEmpty {
            shared.withLock { swap(&$0, &batch) }
        }
        var count = 0
        while count < max, let event = batch.popFirst() {
            body(event)
            count += 1
        }
        return count
    }

    var isEmpty: Bool { batch.isEmpty && shared.withLock { $0.isEmpty } }

    var depth: Int { shared.withLock { $0.count } }

    var capacity: Int { .max }

    var spaceParker: Parker? { nil }
}
