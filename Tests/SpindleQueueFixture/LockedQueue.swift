@_spi(Benchmarks) import Spindle
import Synchronization

/// The simplest event queue there is, a mutex around an array, for the test
/// matrices' third queue kind: the engine's path through a custom queue
/// (`QueueKind.custom`, SPI), beside its two built-in queues.
///
/// Thread safety: `enqueue` from any thread; `drain` and `isEmpty` on the
/// loop's runner only; `looksEmpty` from any thread.
final class LockedQueue<Event: Sendable>: CustomEventQueue {
    private let events = Mutex<[Event]>([])

    func enqueue(_ event: Event) {
        events.withLock { $0.append(event) }
    }

    func enqueue(contentsOf batch: UnsafeBufferPointer<Event>) {
        events.withLock { $0.append(contentsOf: batch) }
    }

    func drain(max: Int, _ body: (UnsafeMutableRawPointer) -> Void) -> Int {
        let taken = events.withLock { events -> [Event] in
            let count = Swift.min(max, events.count)
            defer { events.removeFirst(count) }
            return Array(events.prefix(count))
        }
        // `body` moves each event out of memory the queue owns.
        let buffer = UnsafeMutableBufferPointer<Event>.allocate(capacity: taken.count)
        defer { buffer.deallocate() }
        _ = buffer.initialize(fromContentsOf: taken)
        for index in buffer.indices { body(UnsafeMutableRawPointer(buffer.baseAddress! + index)) }
        return taken.count
    }

    var isEmpty: Bool { looksEmpty }

    var looksEmpty: Bool { events.withLock { $0.isEmpty } }
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
