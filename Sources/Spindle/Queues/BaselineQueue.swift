/// The pure-Swift comparison queue: a lock (pthread mutex) around a growable
/// ring buffer, drained in batches by swapping the whole buffer out under one
/// lock acquisition (the fastest plain-Swift MPSC design we know; no dispatch
/// per event). It handles `Event` payloads exactly as the C queues do (raw
/// memory, value witnesses), so the benchmarks compare queues, not generic
/// overheads.
///
/// The engine around it (reducer thread, parking, feedback delivery) is the
/// same as for the C queues.
///
/// Thread safety: `tryEnqueue` from any thread; `drain`, `isEmpty` on the
/// consumer only.
final class BaselineQueue<Event: Sendable>: EventQueue {
    private let shared = Lock(RawFIFO<Event>(capacity: 1024))
    // Reducer thread only: the batch taken out of `shared`.
    @exclusivity(unchecked) nonisolated(unsafe) private var batch = RawFIFO<Event>(capacity: 1024)

    init() {}

    @inline(__always)
    @discardableResult
    func tryEnqueue(_ event: Event) -> Bool {
        shared.withLock { $0.append(event) }
        return true
    }

    /// Enqueues copies of `events` in order under one lock acquisition.
    func enqueue(contentsOf events: UnsafeBufferPointer<Event>) {
        shared.withLock { fifo in
            for event in events { fifo.append(event) }
        }
    }

    func drain(max: Int, _ body: (UnsafeMutableRawPointer) -> Void) -> Int {
        if batch.isEmpty {
            shared.withLock { $0.exchange(with: &batch) }
        }
        var count = 0
        while count < max, !batch.isEmpty {
            batch.removeFirst(movingWith: body)
            count += 1
        }
        return count
    }

    var isEmpty: Bool { batch.isEmpty && shared.withLock { $0.isEmpty } }

    /// True when nothing waits in the shared part. Any thread.
    var looksEmpty: Bool { shared.withLock { $0.isEmpty } }
}
