#if !SpindleNIO
#error("SpindleNIO needs swift-nio, which this package uses only with its trait SpindleNIO on: add it to the package's traits (.package(url: …, traits: [\"SpindleNIO\"]))")
#endif
public import NIOCore
import NIOPosix
public import Spindle

/// A loop per channel, on the channel's event loop: the channel's decoded
/// messages are the loop's events, and what each new state says to write
/// is written back, in state order.
///
/// Add one handler per channel (it holds that channel's loop), after the
/// decoders and encoders of the protocol:
///
/// ```swift
/// let handler = SpinHandler(spin: connectionSpin, event: { request in .received(request) },
///                           replies: { state in state.responses })
/// try channel.pipeline.syncOperations.addHandler(handler)
/// ```
///
/// - **One loop per channel, where the channel lives.** The loop starts when
///   the channel becomes active (or when the handler is added to an active
///   channel) and runs on the channel's event loop: the reducer and the
///   spin's feedbacks that name no queue run there, serialized with the
///   channel's other handlers. No thread hop, and no task: a message read
///   while the loop is idle is reduced in `channelRead` itself (the inline
///   fast path); one read while the loop runs is reduced by that run (see
///   <doc:SpindleNIO>). A wake-up from elsewhere (a stop, an emit from
///   another thread) is one task of the event loop's (`execute`).
/// - **Replies in state order.** For every state a reduction makes (not the
///   initial state), `replies` says what to write; the handler writes each
///   message at once and flushes once per read (in `channelReadComplete`),
///   so pipelined requests cost one flush; a state reduced outside a read
///   (a slice run for a wake-up from elsewhere) is flushed at once.
/// - **Back-pressure.** While the channel is not writable, the handler
///   stops reading: the peer's next requests wait in the kernel, not in the
///   loop's queue. On a bounded queue (`SpinOptions.queue`) with
///   `OverflowPolicy.block`, a message that finds the queue full never
///   blocks the event loop (the loop runs there: it would wait for itself):
///   the handler keeps it, and the ones read after it, in order, stops
///   reading, and hands them to the loop once a slice has made room, then
///   reads on. Nothing read is lost. (Under `OverflowPolicy.dropNewest`
///   a message that finds the queue full is dropped and counted by the
///   loop, as that policy says.)
/// - **A loop that cannot start** (options that cannot run, a spin whose
///   per-start feedbacks need an environment): the handler fires the
///   `SpinExecutorError` down the pipeline (`errorCaught`) and closes
///   the channel; it reads nothing. The spin's observers hear it too
///   (`SpinObserver.loopFailedToStart(_:)`, on the event loop).
/// - **Stop.** When the channel goes inactive, the loop is asked to stop
///   (`SpinLoop.requestStop(_:)`, with drain) once the messages held for a
///   full queue are in it: every message already read is reduced (writes
///   to the closed channel fail quietly).
///   `await handler.loop?.stop()` (read `loop` on the event loop; the loop
///   itself is `Sendable`) waits for that stop and returns its report.
///
/// Thread safety: a channel handler; every method on the channel's event
/// loop.
public final class SpinHandler<State: Sendable, Event: Sendable, InboundIn, OutboundOut>: ChannelDuplexHandler {
    public typealias InboundIn = InboundIn
    public typealias OutboundIn = Never
    public typealias OutboundOut = OutboundOut

    // The handler is generic and lives in another module than its user,
    // and the pipeline calls it through its protocol witnesses, which are
    // this module's unspecialized code: per message, that costs metadata
    // lookups, value-witness calls and a dynamic cast for `NIOAny`. So the
    // per-message and per-state paths are reached through two closures
    // that the `@inlinable` init builds in the caller's module, where the
    // types are known: they run specialized. (Neither captures anything:
    // they cost the handler no allocation.)
    /// Reads one message: `read(_:)`, specialized.
    @usableFromInline let readMessage: (SpinHandler, NIOAny) -> Void
    @usableFromInline let event: (InboundIn) -> Event?
    /// What only the start needs (the spin, its options, the writer), let
    /// go once the loop has started: the handler lives as long as its
    /// channel, and kept inline they would cost every connection about a
    /// quarter of a kilobyte more for its lifetime.
    @usableFromInline @exclusivity(unchecked) var pendingStart: PendingStart?
    /// The channel's loop, from its start on (the channel's activation). On
    /// the event loop only.
    public var loop: SpinLoop<State, Event>? { startedLoop }
    // `startedLoop` and `side` skip the dynamic exclusivity checks, as
    // `ChannelSide`'s variables do (and for the same reasons).
    @usableFromInline @exclusivity(unchecked) var startedLoop: SpinLoop<State, Event>?
    /// What the handler and the loop's writer feedbacks share (on the event
    /// loop only): the pending read, the held messages, the writes.
    @usableFromInline @exclusivity(unchecked) var side: ChannelSide<State, Event, OutboundOut>?
    /// `startedLoop`'s in-place emit (set with it; `startedLoop` keeps the
    /// loop alive for it).
    @usableFromInline @exclusivity(unchecked) var emitter: OwnExecutorEmitter<State, Event>?

    /// Creates a handler for one channel.
    /// - Parameters:
    ///   - spin: the connection's spin; started once per handler, on the
    ///     channel's event loop.
    ///   - options: the loop's options, but for the executor (always the
    ///     channel's event loop).
    ///   - event: the loop's event for a decoded message; nil ignores it.
    ///   - replies: the messages to write for a new state, in order (empty:
    ///     nothing). Called on the event loop, once per state.
    @inlinable
    public init(
        spin: Spin<State, Event>,
        options: SpinOptions = SpinOptions(),
        event: @escaping (InboundIn) -> Event?,
        replies: @escaping @Sendable (State) -> [OutboundOut]
    ) {
        self.event = event
        readMessage = { handler, data in handler.read(data) }
        pendingStart = PendingStart(spin: spin, options: options, replies: .array(replies)) { side, pending in
            guard case .array(let replies) = pending.replies else { preconditionFailure("SpindleNIO: replies") }
            let bound = InlineFeedbackBound(side)
            return Feedback(renderingInline: { state, _ in
                bound.side.reduced(writing: { out in for message in replies(state) { out.write(message) } })
                return false
            })
        }
    }

    /// Creates a handler for one channel whose replies are written one
    /// message at a time, with no array per state: `write` gets each new
    /// state and a ``SpinReplies`` to write its messages to (in order) and
    /// to allocate their buffers from (the channel's allocator).
    /// - Parameters:
    ///   - spin: the connection's spin; started once per handler, on the
    ///     channel's event loop.
    ///   - options: the loop's options, but for the executor (always the
    ///     channel's event loop).
    ///   - event: the loop's event for a decoded message; nil ignores it.
    ///   - write: writes the messages for a new state, in order (none:
    ///     nothing). Called on the event loop, once per state.
    @inlinable
    public init(
        spin: Spin<State, Event>,
        options: SpinOptions = SpinOptions(),
        event: @escaping (InboundIn) -> Event?,
        write: @escaping @Sendable (State, inout SpinReplies<OutboundOut>) -> Void
    ) {
        self.event = event
        readMessage = { handler, data in handler.read(data) }
        pendingStart = PendingStart(spin: spin, options: options, replies: .writer(write)) { side, pending in
            guard case .writer(let write) = pending.replies else { preconditionFailure("SpindleNIO: replies") }
            let bound = InlineFeedbackBound(side)
            return Feedback(renderingInline: { state, _ in
                bound.side.reduced(writing: { write(state, &$0) })
                return false
            })
        }
    }

    /// The start's inputs (see `pendingStart`).
    @usableFromInline
    final class PendingStart {
        /// How the handler's user makes a state's replies.
        @usableFromInline
        enum Replies {
            case array(@Sendable (State) -> [OutboundOut])
            case writer(@Sendable (State, inout SpinReplies<OutboundOut>) -> Void)
        }

        @usableFromInline let spin: Spin<State, Event>
        @usableFromInline let options: SpinOptions
        @usableFromInline let replies: Replies
        /// The writer feedback for a channel's side, specialized (made by
        /// the init in its caller's module; it captures nothing: it finds
        /// the replies in this object). Called by the engine after each
        /// reduction with no wrapper between (`Feedback(renderingInline:)`).
        @usableFromInline let makeWriter: (ChannelSide<State, Event, OutboundOut>, PendingStart) -> Feedback<State, Event>

        @inlinable
        init(
            spin: Spin<State, Event>, options: SpinOptions, replies: Replies,
            makeWriter: @escaping (ChannelSide<State, Event, OutboundOut>, PendingStart) -> Feedback<State, Event>
        ) {
            self.spin = spin
            self.options = options
            self.replies = replies
            self.makeWriter = makeWriter
        }
    }

    public func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context: context) }
    }

    public func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    public func channelInactive(context: ChannelHandlerContext) {
        side?.flushIfWritten()
        side?.requestStop()
        context.fireChannelInactive()
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        side?.requestStop()
        side?.context = nil
    }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        readMessage(self, data)
    }

    /// `channelRead`'s work: reached through `readMessage`, specialized.
    @inlinable
    func read(_ data: NIOAny) {
        // `emitter` is set with `side`, at the start: no event is made
        // before it.
        guard let emitter, let event = event(unwrapInboundIn(data)) else { return }
        _ = withStartedSide { read(event, side: $0, emitter: emitter) }
    }

    /// Calls `body` with the side and returns true; false before the
    /// loop's start (no side yet). Unretained: the handler holds its side
    /// from the start on and never lets it go, and the caller holds the
    /// handler, where a strong reference read out of `side` would be
    /// retained and released around each call (per message, per read).
    @inlinable
    func withStartedSide(_ body: (ChannelSide<State, Event, OutboundOut>) -> Void) -> Bool {
        guard side != nil else { return false }
        Unmanaged.passUnretained(side.unsafelyUnwrapped)._withUnsafeGuaranteedRef(body)
        return true
    }

    /// A read's event, delivered (`read(_:)`, with the side it holds).
    @inlinable
    func read(_ event: Event, side: ChannelSide<State, Event, OutboundOut>, emitter: OwnExecutorEmitter<State, Event>) {
        // The emit runs the loop here when it is idle (the inline fast
        // path): its replies are written now, and flushed once the read
        // is complete. A read NIO makes from inside one of those writes
        // (the pipelining assist) comes back here while the outer read is
        // still writing: it leaves `reading` as it found it.
        let outerReading = side.reading
        side.reading = true
        if side.emitsWithoutWaiting, let loop = startedLoop {
            side.deliverWithoutWaiting(event, to: loop)
        } else {
            // Any other queue never waits: it accepts the event, drops it
            // (a full `.dropNewest` queue, counted by the loop), or refuses
            // it once the loop stops (the channel went inactive: moot).
            // NIO reads on the channel's event loop, the loop's executor:
            // an idle loop reduces the message here and now (the in-place
            // path), reached without loading the loop object (`emitter`).
            _ = emitter.emit(event)
        }
        side.reading = outerReading
    }

    public func channelReadComplete(context: ChannelHandlerContext) {
        _ = withStartedSide { $0.flushIfWritten() }
        context.fireChannelReadComplete()
    }

    public func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // A decoder hands over its last messages before such an event (the
        // input closed), with no read complete after them.
        side?.flushIfWritten()
        context.fireUserInboundEventTriggered(event)
    }

    public func read(context: ChannelHandlerContext) {
        // Every read the channel makes passes here.
        let started = withStartedSide { side in
            if side.mayRead {
                context.read()
            } else {
                side.readPending = true
            }
        }
        if !started { context.read() }
    }

    public func channelWritabilityChanged(context: ChannelHandlerContext) {
        if let side {
            side.writable = context.channel.isWritable
            side.readIfPending()
        }
        context.fireChannelWritabilityChanged()
    }

    /// Starts the loop once, with the writer feedback bound to `context`.
    func start(context: ChannelHandlerContext) {
        // Set until a start succeeds: a loop starts once per handler.
        guard let pending = pendingStart else { return }
        let blocking = if case .bounded(_, .block) = pending.options.queue { true } else { false }
        let side = ChannelSide<State, Event, OutboundOut>(context: context, emitsWithoutWaiting: blocking)
        var options = pending.options
        options.executor = EventLoopExecutors.executor(of: context.eventLoop)
        // One feedback (each costs its loop memory, per connection): every
        // state, in order, written as it is reduced.
        let loop: SpinLoop<State, Event>
        do {
            loop = try pending.spin.start(options: options, adding: [pending.makeWriter(side, pending)])
        } catch {
            // Options that cannot run, a spin that needs an environment:
            // the channel cannot be served. Its pipeline hears why, and
            // the channel is closed.
            side.context = nil
            context.fireErrorCaught(error)
            context.close(promise: nil)
            return
        }
        side.loop = loop
        self.side = side
        startedLoop = loop
        emitter = loop.ownExecutorEmitter
        pendingStart = nil
    }
}

/// What a channel's handler and its loop's writer feedback share: on the
/// channel's event loop only (the feedback holds it in an
/// `InlineFeedbackBound`).
/// The context and the loop are held strongly, as NIO handlers hold their
/// context, and let go explicitly (a weak reference costs each connection
/// a side table, and each use a weak load): the context in the handler's
/// `handlerRemoved`, which NIO calls for every handler of a closed channel;
/// the loop once its stop is requested. Until then they and the loop's
/// feedback, which holds this object, keep each other alive.
///
/// Its variables skip Swift's dynamic exclusivity checks
/// (`@exclusivity(unchecked)`): each is touched on the event loop alone, in
/// accesses that never overlap, and each check costs a thread-local lookup
/// per access, several per message.
@usableFromInline
final class ChannelSide<State: Sendable, Event: Sendable, OutboundOut> {
    @usableFromInline @exclusivity(unchecked) var context: ChannelHandlerContext?
    @usableFromInline @exclusivity(unchecked) var loop: SpinLoop<State, Event>?
    /// The loop's queue is bounded with `.block`: emits must not wait (the
    /// loop runs on this event loop).
    @usableFromInline let emitsWithoutWaiting: Bool
    /// The first state the feedback sees is the initial state: no reply.
    @usableFromInline @exclusivity(unchecked) var sawInitialState = false
    @usableFromInline @exclusivity(unchecked) var written = false
    /// A `read` held back (the channel is not writable, or messages wait).
    @usableFromInline @exclusivity(unchecked) var readPending = false
    /// Messages read while the loop's `.block` queue was full, oldest
    /// first: emitted, in order, before any message read after them.
    @usableFromInline @exclusivity(unchecked) var held: [Event] = [] {
        didSet { holding = !held.isEmpty }
    }
    /// `!held.isEmpty`, kept apart: `read(context:)` asks it per read, from
    /// unspecialized code, where asking an `[Event]` costs metadata lookups.
    @usableFromInline @exclusivity(unchecked) var holding = false
    /// Inside the handler's `channelRead`: a slice run there (inline)
    /// leaves its flush to `channelReadComplete`, one per read.
    @usableFromInline @exclusivity(unchecked) var reading = false
    /// A retry of `held` is queued on the event loop.
    @usableFromInline @exclusivity(unchecked) var retryQueued = false
    /// The channel went away while messages were held: the loop is asked
    /// to stop once they are emitted.
    @usableFromInline @exclusivity(unchecked) var stopWhenDelivered = false

    /// The channel's event loop, where the loop runs.
    @usableFromInline let eventLoop: any EventLoop

    /// The channel's writability as of its last change: NIO tells the
    /// pipeline of every change (`channelWritabilityChanged`, on the event
    /// loop, as the writes that flip it are made), so a `read` need not ask
    /// the channel (a call through `Channel` and an atomic load per read).
    @usableFromInline @exclusivity(unchecked) var writable: Bool

    @inlinable
    init(context: ChannelHandlerContext, emitsWithoutWaiting: Bool) {
        self.context = context
        self.eventLoop = context.eventLoop
        self.emitsWithoutWaiting = emitsWithoutWaiting
        self.writable = context.channel.isWritable
    }

    /// Whether the handler may pass a `read` on: the channel is writable and
    /// no message waits for room in the loop's queue.
    @inlinable
    var mayRead: Bool {
        !holding && writable
    }

    /// A read's message on a `.block` queue: emits without waiting, or holds
    /// the message (behind any already held).
    @usableFromInline
    func deliverWithoutWaiting(_ event: Event, to loop: SpinLoop<State, Event>) {
        if held.isEmpty, loop.emitWithoutWaiting(event) != nil { return }
        held.append(event)
    }

    /// A state reduced: its replies written. Inside a read they are flushed
    /// once the read is complete (one flush for a peer's pipelined
    /// requests); outside one (a slice a wake-up from elsewhere ran), at
    /// once. Held messages get another try once the slice has returned
    /// (emitted from inside it, they would be reduced before the events
    /// still queued ahead of them). `body` writes the replies (both forms of
    /// `SpinHandler.init`); it is not called for the initial state, nor
    /// once the handler was removed.
    @inlinable
    func reduced(writing body: (inout SpinReplies<OutboundOut>) -> Void) {
        if sawInitialState, let context {
            // The replies use this binding's reference (one retain, not one
            // more for the replies' copy).
            var replies = SpinReplies<OutboundOut>(context: Unmanaged.passUnretained(context))
            withExtendedLifetime(context) { body(&replies) }
            if replies.wroteAny { written = true }
        } else {
            sawInitialState = true
        }
        if !reading { flushIfWritten() }
        if !held.isEmpty { queueRetry() }
    }

    /// Queues one retry of the held messages on the event loop, after the
    /// slice that is running.
    @usableFromInline
    func queueRetry() {
        guard !retryQueued else { return }
        retryQueued = true
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        eventLoop.execute {
            bound.value.retryQueued = false
            bound.value.retryHeld()
        }
    }

    /// Emits the held messages, in order, while the queue has room; reads
    /// on once none is left.
    @usableFromInline
    func retryHeld() {
        guard let loop else {
            held.removeAll()
            return
        }
        var delivered = 0
        while delivered < held.count, loop.emitWithoutWaiting(held[delivered]) != nil {
            delivered += 1
        }
        held.removeFirst(delivered)
        // Full again: the loop is still running (its queue is not empty),
        // so its next slice tries again.
        guard held.isEmpty else { return }
        if stopWhenDelivered {
            loop.requestStop()
            self.loop = nil
        } else {
            readIfPending()
        }
    }

    /// Asks the loop to stop (drain) once every held message is emitted:
    /// every message read is reduced.
    @usableFromInline
    func requestStop() {
        if held.isEmpty {
            loop?.requestStop()
            loop = nil
        } else {
            stopWhenDelivered = true
        }
    }

    /// Passes on a held-back `read` once reading may go on.
    @usableFromInline
    func readIfPending() {
        guard readPending, mayRead, let context else { return }
        readPending = false
        context.read()
    }

    @inlinable
    func flushIfWritten() {
        guard written else { return }
        written = false
        context?.flush()
    }
}

/// The loop executor of an event loop, one per event loop while it has
/// loops: every handler's loop on that event loop runs on it (an executor
/// of its own would cost each connection an object and two closures).
/// The channel side, as the loop's writer feedback holds it.
///
/// `@unchecked Sendable`: the writer is an inline feedback (no queue of its
/// own), so it runs only in the loop's slices, and every slice of the loop
/// runs on its executor, the channel's event loop (checked in debug
/// builds). `NIOLoopBound` would check the same in every build, at a
/// thread check per state.
@usableFromInline
struct InlineFeedbackBound<State: Sendable, Event: Sendable, OutboundOut>: @unchecked Sendable {
    @usableFromInline let storedSide: ChannelSide<State, Event, OutboundOut>

    @inlinable
    init(_ side: ChannelSide<State, Event, OutboundOut>) {
        storedSide = side
    }

    @inlinable
    var side: ChannelSide<State, Event, OutboundOut> {
        assert(storedSide.eventLoop.inEventLoop, "SpindleNIO: the writer feedback ran off its channel's event loop")
        return storedSide
    }
}

@usableFromInline
enum EventLoopExecutors {
    /// The last executor made on this thread, held weakly: the loops that
    /// run on it keep it (and its event loop) alive, never this thread's
    /// value, which is released when the thread exits (inside its key
    /// destructors, where releasing an event loop is not safe). An event
    /// loop runs on one thread: its handlers find its executor here.
    private final class Cached {
        let eventLoop: ObjectIdentifier
        weak var executor: AnyObject?

        init(eventLoop: ObjectIdentifier, executor: AnyObject?) {
            self.eventLoop = eventLoop
            self.executor = executor
        }
    }

    // nonisolated(unsafe): a thread-specific variable, whose value each
    // thread only reads and writes for itself.
    nonisolated(unsafe) private static let perThread = ThreadSpecificVariable<Cached>()

    /// `eventLoop`'s executor. On `eventLoop`.
    @usableFromInline
    static func executor(of eventLoop: any EventLoop) -> SpinExecutor {
        let identity = ObjectIdentifier(eventLoop)
        // Alive, the executor keeps its event loop alive: the identity is
        // that event loop's, not a later one's at the same address.
        if let cached = perThread.currentValue, cached.eventLoop == identity,
           let object = cached.executor, let executor = SpinExecutor(enqueuingObject: object) {
            return executor
        }
        // One `execute` per scheduling: the event loop's own task queue,
        // cheaper than a task switching to its `executor`. An emit on the
        // event loop outside a slice (`channelRead`) runs the loop at once:
        // the inline fast path.
        let made = SpinExecutor.enqueuing(name: "event loop", isCurrent: { eventLoop.inEventLoop }) {
            eventLoop.execute($0)
        }
        perThread.currentValue = Cached(eventLoop: identity, executor: made.enqueuingObject)
        return made
    }
}

/// Where a ``SpinHandler`` built with `write:` writes a state's replies: one
/// message at a time, in order, to the channel (flushed as the handler
/// says: once per read, or at once outside one), with the channel's
/// allocator for their buffers. Valid only inside the `write` call that
/// gets it, on the event loop; noncopyable, so that it cannot be kept
/// past that call (it reaches the channel through a reference the handler
/// holds only for the call).
public struct SpinReplies<OutboundOut>: ~Copyable {
    /// Unretained: the channel side holds the context through the `write`
    /// call that gets these replies.
    @usableFromInline let context: Unmanaged<ChannelHandlerContext>
    @usableFromInline var wroteAny = false

    @inlinable
    init(context: Unmanaged<ChannelHandlerContext>) {
        self.context = context
    }

    /// The channel's allocator, for the buffers of the messages.
    @inlinable
    public var allocator: ByteBufferAllocator { context._withUnsafeGuaranteedRef { $0.channel.allocator } }

    /// Writes `message` to the channel, after the ones written before it.
    @inlinable
    public mutating func write(_ message: OutboundOut) {
        context._withUnsafeGuaranteedRef { $0.write(NIOAny(message), promise: nil) }
        wroteAny = true
    }
}
