@_spi(Benchmarks) import Spindle

/// The pure-Swift comparison queue, the yardstick of the queue scenarios: a
/// lock (a pthread mutex) around a growable ring buffer, drained in batches
/// by swapping the whole buffer out under one lock acquisition (the fastest
/// plain-Swift MPSC design we know; no dispatch per event).
///
/// A loop runs on it through `QueueKind.custom(_:)` (SPI): the engine around
/// it (the executor, parking, feedback delivery) is the same as for the C
/// queues. `ScenarioRun.start(_:)` makes its factory where the scenario's
/// event type is known, so its code is specialized for that type, as a
/// plain-Swift queue in an application would be (the C queues move each
/// event with its value witnesses).
///
/// Thread safety: `enqueue` from any thread; `drain`, `isEmpty` on the
/// loop's runner only; `looksEmpty` from any thread.
final class BaselineQueue<Event: Sendable>: CustomEventQueue {
    private let shared = Lock(RawFIFO<Event>(capacity: 1024))
    // The loop's runner only (one at a time, ordered by the engine's
    // scheduling): the batch taken out of `shared`. Hence
    // `nonisolated(unsafe)`, for this one property.
    @exclusivity(unchecked) nonisolated(unsafe) private var batch = RawFIFO<Event>(capacity: 1024)

    /// The factory `QueueKind.custom` takes: a queue per loop.
    static var factory: CustomEventQueueFactory {
        CustomEventQueueFactory(name: "baseline") { BaselineQueue<Event>() }
    }

    @inline(__always)
    func enqueue(_ event: Event) {
        shared.withLock { $0.append(event) }
    }

    /// Enqueues copies of `events` in order under one lock acquisition.
    func enqueue(contentsOf events: UnsafeBufferPointer<Event>) {
        shared.withLock { $0.append(copying: events) }
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

    var isEmpty: Bool { batch.isEmpty && looksEmpty }

    var looksEmpty: Bool { shared.withLock { $0.isEmpty } }
}
