@_spi(Benchmarks) import Spindle

/// A plain event queue, a mutex around an array swapped out whole by the
/// runner, for the test
/// matrices' third queue kind: the engine's path through a custom queue
/// (`QueueKind.custom`, SPI), beside its two built-in queues.
///
/// Thread safety: `enqueue` from any thread; `drain` and `isEmpty` on the
/// loop's runner only; `looksEmpty` from any thread.
final class LockedQueue<Event: Sendable>: CustomEventQueue {
    // Spindle's pthread lock, not `Mutex`: Thread Sanitizer does not see
    // `Mutex`'s futex hand-off as a synchronization, and reports races.
    private let shared = Lock<[Event]>([])
    // The loop's runner only (one at a time, ordered by the engine's
    // scheduling): the events taken out of `shared` in one swap, moved out
    // one by one from `head`. Hence `nonisolated(unsafe)`.
    nonisolated(unsafe) private var taken = UnsafeMutableBufferPointer<Event>(start: nil, count: 0)
    nonisolated(unsafe) private var head = 0

    deinit {
        if let base = taken.baseAddress {
            (base + head).deinitialize(count: taken.count - head)
            taken.deallocate()
        }
    }

    func enqueue(_ event: Event) {
        shared.withLock { $0.append(event) }
    }

    func enqueue(contentsOf batch: UnsafeBufferPointer<Event>) {
        shared.withLock { $0.append(contentsOf: batch) }
    }

    func drain(max: Int, _ body: (UnsafeMutableRawPointer) -> Void) -> Int {
        var count = 0
        while count < max {
            if head == taken.count, !takeShared() { break }
            // `body` moves the event out of memory the queue owns.
            body(UnsafeMutableRawPointer(taken.baseAddress! + head))
            head += 1
            count += 1
        }
        return count
    }

    var isEmpty: Bool { head == taken.count && looksEmpty }

    var looksEmpty: Bool { shared.withLock { $0.isEmpty } }

    // Swaps everything enqueued out of `shared` into `taken`; false when
    // nothing was.
    private func takeShared() -> Bool {
        let events = shared.withLock { events -> [Event] in
            defer { events = [] }
            return events
        }
        if taken.baseAddress != nil { taken.deallocate() }
        guard !events.isEmpty else {
            taken = UnsafeMutableBufferPointer(start: nil, count: 0)
            head = 0
            return false
        }
        taken = .allocate(capacity: events.count)
        _ = taken.initialize(fromContentsOf: events)
        head = 0
        return true
    }
}

private final class LockedQueueMaker: CustomEventQueueMaker {
    func makeQueue<Event: Sendable>(of eventType: Event.Type) -> any CustomEventQueue<Event> {
        LockedQueue<Event>()
    }
}

extension QueueKind {
    /// A loop's queue made outside the engine (`LockedQueue`), for loops of
    /// any event type.
    public static let locked = QueueKind.custom(
        CustomEventQueueFactory(name: "locked", maker: LockedQueueMaker()))

    /// The same queue, for loops of `Event`s only (a typed factory, the
    /// form the benchmark harness uses).
    public static func locked<Event: Sendable>(for _: Event.Type) -> QueueKind {
        .custom(CustomEventQueueFactory(name: "locked(\(Event.self))") { LockedQueue<Event>() })
    }
}
