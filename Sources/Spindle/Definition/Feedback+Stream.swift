import Dispatch

extension Feedback {
    /// Creates a stream-form feedback: one effect for the loop's whole life,
    /// which reads the loop's states as an `AsyncStream` and returns the
    /// `AsyncSequence` of events to emit.
    ///
    /// @Snippet(path: "Spindle/Snippets/Spindle/AsyncAwait", slice: "streamEffect")
    ///
    /// When the loop delivers its initial state, `effect` is called once and
    /// its sequence is iterated in a `Task`; every element is emitted, in
    /// order. The stream yields the initial state first, then every new
    /// state in reduction order: a feedback sees every state. By default it
    /// buffers without limit, so a slow reader holds the states it has not
    /// read yet; `bufferingPolicy` bounds it (the reader then skips the
    /// oldest waiting states, never the latest).
    ///
    /// > Important: Stopping (or releasing) the loop finishes the stream and
    /// > cancels the task; events the sequence produces after that are
    /// > discarded. If the sequence ends early, the stream takes no more
    /// > states and the feedback does nothing for the rest of the loop's life.
    /// > A thrown error (other than `CancellationError`) goes to
    /// > ``SpinOptions/onEffectError``.
    ///
    /// There is no execution strategy: the one run is never cancelled by a
    /// new state.
    ///
    /// - Parameters:
    ///   - effect: called once per loop with the stream of its states.
    ///   - bufferingPolicy: what the stream keeps while its reader lags
    ///     (every state by default).
    ///   - queue: where the effect is called and states are handed to the
    ///     stream (nil: the loop's executor). The sequence is iterated there
    ///     too when it is a queue (`on:`, or a loop on
    ///     ``SpinExecutor/queue(_:)``), else on the concurrency runtime's
    ///     executor.
    public init<Events: AsyncSequence & SendableMetatype>(
        streamEffect effect: @escaping @Sendable (AsyncStream<State>) -> Events,
        bufferingPolicy: SpinStates<State>.BufferingPolicy = .unbounded,
        on queue: DispatchQueue? = nil
    ) where Events.Element == Event {
        self.init(
            effect: .stream({ states, emitter in
                for try await event in effect(states) {
                    if await !emitter.send(event) { return }
                }
            }),
            queue: queue,
            strategy: .continueOnNewState
        )
        if case .bufferingNewest = bufferingPolicy { streamBufferLimit = bufferingPolicy.limit }
    }
}
