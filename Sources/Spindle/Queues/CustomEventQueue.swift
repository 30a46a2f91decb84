/// An event queue made outside the engine, for a loop started with
/// ``QueueKind/custom(_:)``: many producers, one consumer (the loop's
/// runner). SPI (`@_spi(Benchmarks) import Spindle`): the benchmark
/// harness's pure-Swift yardstick (a mutex around a ring buffer) and tests
/// of the engine's queue-independent paths plug in here. It is not a
/// supported choice for applications: ``QueueKind/lockFree`` and
/// ``QueueKind/bounded(capacity:overflow:)`` are.
///
/// The engine calls it through closures formed by
/// ``CustomEventQueueFactory/init(name:_:)`` where the queue's type is
/// known (one indirect call per emit and per drain), and reaches the
/// built-in queues directly.
///
/// **Thread safety:** ``enqueue(_:)`` and ``enqueue(contentsOf:)`` from
/// any thread at once; ``drain(max:_:)`` and ``isEmpty`` only from the
/// loop's runner, one call at a time; ``looksEmpty`` from any thread. An
/// enqueue must publish its event with at least release ordering (a mutex
/// does); the engine fences after it before it looks at the loop's
/// scheduling state.
@_spi(Benchmarks)
public protocol CustomEventQueue<Event>: AnyObject, Sendable {
    /// The loop's event type.
    associatedtype Event: Sendable

    /// Appends `event`. Any thread. A custom queue is unbounded: an emit
    /// into it is always accepted while the loop runs.
    func enqueue(_ event: Event)

    /// Appends copies of `events`, in order, so that another producer's
    /// events are not interleaved with them. Any thread.
    func enqueue(contentsOf events: UnsafeBufferPointer<Event>)

    /// Hands up to `max` events, oldest first per producer, to `body` by
    /// address: `body` moves the `Event` out of the pointed memory, which
    /// the queue then treats as uninitialized. The loop's runner only.
    /// - Returns: how many events were handed out.
    func drain(max: Int, _ body: (UnsafeMutableRawPointer) -> Void) -> Int

    /// True when no event is waiting. The loop's runner only (exact there).
    var isEmpty: Bool { get }

    /// True when no event enqueued by another thread is waiting: read by
    /// any thread, after the loop's runner went idle, to decide whether to
    /// schedule it again. May lag an enqueue in flight.
    var looksEmpty: Bool { get }
}

/// Makes each loop's ``CustomEventQueue`` for whatever event type the loop
/// has (see ``CustomEventQueueFactory/init(name:maker:)``). SPI
/// (`@_spi(Benchmarks)`).
@_spi(Benchmarks)
public protocol CustomEventQueueMaker: AnyObject, Sendable {
    /// A new, empty queue for one loop of `Event`s.
    func makeQueue<Event: Sendable>(of eventType: Event.Type) -> any CustomEventQueue<Event>
}

/// The payload of ``QueueKind/custom(_:)``: makes each loop's
/// ``CustomEventQueue``. SPI (`@_spi(Benchmarks)`).
///
/// Its initializer is inlinable: called with a concrete queue type, it
/// forms the engine's calls into the queue in the caller's module,
/// specialized for that type, so a generic queue of the caller's costs no
/// generic-metadata lookups per event. A queue whose events are not the
/// loop's is an invalid option: the loop does not start
/// (``SpinExecutorError/invalidOptions(reason:)``). Two factories are equal
/// when they are copies of one value, so ``QueueKind`` stays `Hashable`.
@_spi(Benchmarks)
public struct CustomEventQueueFactory: Sendable, Hashable, CustomStringConvertible {
    /// Where a factory's queues come from: one of the two initializers.
    @usableFromInline
    enum Source: Sendable {
        /// ``init(name:_:)``: a queue of one event type, wrapped in its
        /// `CustomQueueCalls<Event>` (an `AnyObject` here, as `Source` is
        /// not generic; `makeQueue` casts it back once per loop).
        case typed(eventType: Any.Type, make: @Sendable () -> AnyObject)
        /// ``init(name:maker:)``: queues of any event type.
        case anyEvent(any CustomEventQueueMaker)
    }

    @usableFromInline
    final class Maker: Sendable {
        let name: String
        let source: Source

        @usableFromInline
        init(name: String, source: Source) {
            self.name = name
            self.source = source
        }
    }

    @usableFromInline let maker: Maker

    /// A factory of queues made by `make`, one per loop, at its start.
    /// - Parameters:
    ///   - name: how the queue is named in descriptions and errors.
    ///   - make: makes one loop's queue.
    @inlinable
    public init<Queue: CustomEventQueue>(name: String, _ make: @escaping @Sendable () -> Queue) {
        maker = Maker(name: name, source: .typed(eventType: Queue.Event.self) { CustomQueueCalls(make()) })
    }

    /// A factory of queues for loops of any event type, made by `maker`,
    /// one per loop, at its start. The engine's calls go through the
    /// protocol, unspecialized: for tests, not for measurements.
    public init(name: String, maker: any CustomEventQueueMaker) {
        self.maker = Maker(name: name, source: .anyEvent(maker))
    }

    /// How the queue is named in descriptions and errors.
    public var name: String { maker.name }

    public var description: String { maker.name }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.maker === rhs.maker }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(maker)) }

    /// Why the factory cannot serve a loop of `Event`s, or nil.
    func invalidity<Event>(for _: Event.Type) -> String? {
        guard case .typed(let eventType, _) = maker.source, eventType != Event.self else { return nil }
        return "the custom queue '\(maker.name)' holds \(eventType), the loop's events are \(Event.self)"
    }

    /// A new queue for a loop of `Event`s; nil when `invalidity(for:)` is not.
    func makeQueue<Event: Sendable>(of eventType: Event.Type) -> CustomQueueCalls<Event>? {
        switch maker.source {
        case .typed(_, let make): make() as? CustomQueueCalls<Event>
        case .anyEvent(let maker): CustomQueueCalls(maker.makeQueue(of: eventType))
        }
    }
}

/// One loop's custom queue, as the calls the engine makes into it: closures
/// formed where the queue's type is known (see `CustomEventQueueFactory`),
/// so specialized for it. They capture nothing and take the queue as an
/// argument, and the engine reaches this object and the queue unretained:
/// a retain and a release per call would touch a cache line that every
/// producer and the runner share (CONTRIBUTING.md, "The benchmark's
/// yardstick").
///
/// SPI only because its inlinable initializer names ``CustomEventQueue``;
/// nothing outside the engine calls it.
///
/// Thread safety: as the queue's own (``CustomEventQueue``).
@_spi(Benchmarks)
public final class CustomQueueCalls<Event: Sendable>: Sendable {
    /// Keeps the queue alive.
    @usableFromInline let owner: AnyObject & Sendable
    /// The queue, unretained (kept by `owner`): see `withQueue(_:)`.
    @usableFromInline let queue: Unmanaged<AnyObject & Sendable>
    @usableFromInline let enqueue: @Sendable (AnyObject, Event) -> Void
    @usableFromInline let enqueueContentsOf: @Sendable (AnyObject, UnsafeBufferPointer<Event>) -> Void
    @usableFromInline let drain: @Sendable (AnyObject, Int, (UnsafeMutableRawPointer) -> Void) -> Int
    @usableFromInline let isEmpty: @Sendable (AnyObject) -> Bool
    @usableFromInline let looksEmpty: @Sendable (AnyObject) -> Bool

    @inlinable
    public init<Queue: CustomEventQueue>(_ queue: Queue) where Queue.Event == Event {
        owner = queue
        self.queue = Unmanaged.passUnretained(queue)
        enqueue = { unsafeDowncast($0, to: Queue.self).enqueue($1) }
        enqueueContentsOf = { unsafeDowncast($0, to: Queue.self).enqueue(contentsOf: $1) }
        drain = { unsafeDowncast($0, to: Queue.self).drain(max: $1, $2) }
        isEmpty = { unsafeDowncast($0, to: Queue.self).isEmpty }
        looksEmpty = { unsafeDowncast($0, to: Queue.self).looksEmpty }
    }

    /// Calls `body` with the queue and no retain of it (`owner` keeps it).
    @inline(__always)
    func withQueue<Result>(_ body: (AnyObject & Sendable) -> Result) -> Result {
        queue._withUnsafeGuaranteedRef(body)
    }
}
