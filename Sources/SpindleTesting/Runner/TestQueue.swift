@_spi(Benchmarks) import Spindle

/// The event queue of a loop under a ``TestSpin``: the spin's pending
/// events, in one FIFO the runner can read (``pending``), plugged into the
/// engine as a custom queue.
///
/// - An event the test sends goes first (``sendNext()``): ``TestSpin/send(_:)->_``
///   reduces it at once, ahead of the events pending.
/// - The loop reduces one event per slice (`maxBatch` 1), and only when
///   the runner allows it (``allowOne()``): a slice run for anything else
///   (the initial state's delivery) reduces nothing. ``handed`` counts the
///   events taken, which names the state each run starts from.
/// - Once frozen (the runner stopped), it hands nothing out and says it is
///   empty, so the loop's last slice finishes at once: pending events stay
///   pending, as the runner documents.
///
/// **Thread safety:** any thread; everything is behind a lock.
final class TestQueue<Event: Sendable>: CustomEventQueue {
    private struct Books: Sendable {
        var events: [Event] = []
        var sendNext = false
        var frozen = false
        var allowance = 0
        var handed = 0
        var diverted: [Event] = []
    }

    // protected by lock: the pending events, the flags, the count.
    private let books = Lock(Books())
    /// Which events are collected in ``diverted`` instead of queued
    /// (``TestFeedback``: a feedback's events are collected, never reduced).
    private let divert: (@Sendable (Event) -> Bool)?

    init(divert: (@Sendable (Event) -> Bool)? = nil) {
        self.divert = divert
    }

    /// The events diverted, in the order enqueued.
    var diverted: [Event] { books.withLock { $0.diverted } }

    /// The events not reduced yet, oldest first.
    var pending: [Event] { books.withLock { $0.events } }

    /// Whether an event waits to be reduced.
    var hasPending: Bool { books.withLock { !$0.events.isEmpty } }

    /// How many events the loop has taken (reduced, one per slice).
    var handed: Int { books.withLock { $0.handed } }

    /// The next event enqueued goes first (the test's send).
    func sendNext() {
        books.withLock { $0.sendNext = true }
    }

    /// Clears a ``sendNext()`` that no enqueue used (a refused emit).
    func endSend() {
        books.withLock { $0.sendNext = false }
    }

    /// The next drain may hand out one event (the next slice reduces it).
    func allowOne() {
        books.withLock { $0.allowance = 1 }
    }

    /// Hands nothing out from now on (see the type's discussion).
    func freeze() {
        books.withLock { $0.frozen = true }
    }

    func enqueue(_ event: Event) {
        let diverts = divert?(event) ?? false
        books.withLock { books in
            if diverts {
                books.diverted.append(event)
            } else if books.sendNext {
                books.sendNext = false
                books.events.insert(event, at: 0)
            } else {
                books.events.append(event)
            }
        }
    }

    func enqueue(contentsOf events: UnsafeBufferPointer<Event>) {
        for event in events { enqueue(event) }
    }

    func drain(max: Int, _ body: (UnsafeMutableRawPointer) -> Void) -> Int {
        let taken = books.withLock { books -> [Event] in
            guard !books.frozen else { return [] }
            let count = Swift.min(max, books.events.count, books.allowance)
            defer {
                books.events.removeFirst(count)
                books.handed += count
                books.allowance -= count
            }
            return Array(books.events.prefix(count))
        }
        for event in taken {
            // `body` moves the event out of this memory.
            let slot = UnsafeMutablePointer<Event>.allocate(capacity: 1)
            slot.initialize(to: event)
            body(UnsafeMutableRawPointer(slot))
            slot.deallocate()
        }
        return taken.count
    }

    var isEmpty: Bool { looksEmpty }

    var looksEmpty: Bool { books.withLock { $0.frozen || $0.events.isEmpty } }
}
