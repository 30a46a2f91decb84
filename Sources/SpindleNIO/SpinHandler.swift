public import NIOCore
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
///   channel) and runs on the channel's event loop, each scheduling one
///   task of the event loop's (`execute`): the reducer and the spin's
///   feedbacks that name no queue run on that event loop, serialized
///   with the channel's other handlers. No thread hop: a message read on the
///   event loop is reduced there, in a job that runs after the read (see
///   <doc:SpindleNIO>).
/// - **Replies in state order.** For every state a reduction makes (not the
///   initial state), `replies` says what to write; the handler writes each
///   message at once and flushes once per slice (a batch of reductions),
///   so pipelined requests cost one flush.
/// - **Back-pressure.** While the channel is not writable, the handler
///   stops reading: the peer's next requests wait in the kernel, not in the
///   loop's queue.
/// - **Stop.** When the channel goes inactive, the loop is asked to stop
///   (`SpinLoop.requestStop(_:)`, with drain): every message
///   already read is reduced (writes to the closed channel fail quietly).
///   `await handler.loop?.stop()` (read `loop` on the event loop; the loop
///   itself is `Sendable`) waits for that stop and returns its report.
///
/// Thread safety: a channel handler; every method on the channel's event
/// loop.
public final class SpinHandler<State: Sendable, Event: Sendable, InboundIn, OutboundOut>: ChannelDuplexHandler {
    public typealias InboundIn = InboundIn
    public typealias OutboundIn = Never
    public typealias OutboundOut = OutboundOut

    // `@usableFromInline` and the `@inlinable` methods below: the handler
    // is generic and lives in another module than its user, so without them
    // its per-message code runs unspecialized (metadata lookups and dynamic
    // casts for `NIOAny`).
    @usableFromInline let spin: Spin<State, Event>
    @usableFromInline let event: (InboundIn) -> Event?
    @usableFromInline let replies: @Sendable (State) -> [OutboundOut]
    @usableFromInline let options: SpinOptions
    /// The channel's loop, from its start on (the channel's activation). On
    /// the event loop only.
    public var loop: SpinLoop<State, Event>? { startedLoop }
    @usableFromInline var startedLoop: SpinLoop<State, Event>?
    /// A `read` held back while the channel is not writable.
    private var readPending = false

    /// Creates a handler for one channel.
    /// - Parameters:
    ///   - spin: the connection's spin; started once per handler, on the
    ///     channel's event loop.
    ///   - options: the loop's options, but for the executor (always the
    ///     channel's event loop).
    ///   - event: the loop's event for a decoded message; nil ignores it.
    ///   - replies: the messages to write for a new state, in order (empty:
    ///     nothing). Called on the event loop, once per state.
    public init(
        spin: Spin<State, Event>,
        options: SpinOptions = SpinOptions(),
        event: @escaping (InboundIn) -> Event?,
        replies: @escaping @Sendable (State) -> [OutboundOut]
    ) {
        self.spin = spin
        self.options = options
        self.event = event
        self.replies = replies
    }

    @inlinable
    public func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context: context) }
    }

    @inlinable
    public func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    public func channelInactive(context: ChannelHandlerContext) {
        loop?.requestStop()
        context.fireChannelInactive()
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        loop?.requestStop()
    }

    @inlinable
    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let loop, let event = event(unwrapInboundIn(data)) else { return }
        // A loop on an unbounded queue accepts every event until it stops;
        // after the stop (the channel went inactive) the message is moot.
        _ = loop.emit(event)
    }

    public func read(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            context.read()
        } else {
            readPending = true
        }
    }

    public func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, readPending {
            readPending = false
            context.read()
        }
        context.fireChannelWritabilityChanged()
    }

    /// Starts the loop once, with the writer feedbacks bound to `context`.
    @inlinable
    func start(context: ChannelHandlerContext) {
        guard startedLoop == nil else { return }
        let writer = NIOLoopBound(ReplyWriter<OutboundOut>(context: context), eventLoop: context.eventLoop)
        let replies = self.replies
        var options = self.options
        // One `execute` per scheduling: the event loop's own task queue,
        // cheaper than a task switching to its `executor`.
        let eventLoop = context.eventLoop
        options.executor = .enqueuing(name: "event loop") { eventLoop.execute($0) }
        startedLoop = spin.start(options: options, adding: [
            // Every state, in order, written as it is reduced …
            Feedback(effect: { (state: State) in
                writer.value.write(replies(state))
            }),
            // … and one flush per slice (a latest-state feedback runs once
            // per batch, after the every-state ones).
            Feedback(effect: { (_: State) in
                writer.value.flushIfWritten()
            }).delivering(.latestState),
        ])
    }
}

/// The writes of one channel's loop: on the channel's event loop only
/// (held in a `NIOLoopBound`). The context is held weakly: the loop's
/// feedbacks hold this writer, and the context holds the handler that holds
/// the loop.
@usableFromInline
final class ReplyWriter<OutboundOut> {
    @usableFromInline weak var context: ChannelHandlerContext?
    /// The first state the feedback sees is the initial state: no reply.
    @usableFromInline var sawInitialState = false
    @usableFromInline var written = false

    @inlinable
    init(context: ChannelHandlerContext) {
        self.context = context
    }

    @inlinable
    func write(_ messages: @autoclosure () -> [OutboundOut]) {
        guard sawInitialState else {
            sawInitialState = true
            return
        }
        guard let context else { return }
        for message in messages() {
            context.write(NIOAny(message), promise: nil)
            written = true
        }
    }

    @inlinable
    func flushIfWritten() {
        guard written else { return }
        written = false
        context?.flush()
    }
}
