import Dispatch

// Spin.Swift's feedback forms that are not "one state in, events out":
// render-only effects, effects that take no state, and several effects
// given as one feedback.
extension Feedback {
    /// Creates a feedback from a render-only effect: it sees every state
    /// and emits nothing (Spin.Swift's `(State) -> Void` form).
    ///
    /// @Snippet(path: "Spindle/Snippets/Spindle/FeedbackFormsSpinSwift", slice: "renderer")
    ///
    /// - Parameters:
    ///   - effect: called with each state.
    ///   - queue: where the effect runs; nil means the loop's executor.
    public init(
        effect: @escaping @Sendable (State) -> Void,
        on queue: DispatchQueue? = nil
    ) {
        self.init(
            syncEffect: { state in
                effect(state)
                return nil
            },
            writingInto: { state, _ in
                effect(state)
                return false
            },
            queue: queue,
            strategy: .cancelOnNewState)
    }

    /// A render-only feedback on the loop's executor (as the render-only
    /// `init(effect:on:)` with no queue), given in the shape
    /// the engine calls after each reduction: `effect` gets the state and
    /// scratch memory it must leave alone, and returns false (it emits
    /// nothing). The engine then calls `effect` itself, with no wrapper
    /// closure between them: a loop cold since its last state loads one
    /// line fewer per state (SpindleNIO's writer, per request).
    @usableFromInline
    package init(renderingInline effect: @escaping @Sendable (State, UnsafeMutableRawPointer) -> Bool) {
        self.init(
            syncEffect: { state in
                // The general path (an observed loop): the same call, with
                // scratch room the effect never writes.
                withUnsafeTemporaryAllocation(of: Event.self, capacity: 1) { scratch in
                    _ = effect(state, UnsafeMutableRawPointer(scratch.baseAddress!))
                }
                return nil
            },
            writingInto: effect,
            queue: nil,
            strategy: .cancelOnNewState)
    }

    /// Creates a feedback from an effect that takes no state and returns an
    /// `AsyncSequence` of events (Spin.Swift's `() -> Stream<Event>` form):
    /// an event source — user input, a socket, a timer — subscribed once
    /// for the loop's whole life.
    ///
    /// `effect` is called once, when the loop delivers its initial state;
    /// its sequence is iterated in a `Task` (whose code runs on `queue` when
    /// one is named) and every element is emitted, in order.
    ///
    /// > Important: Stopping (or releasing) the loop cancels the task; events
    /// > the sequence produces after that are discarded. A thrown error
    /// > (other than `CancellationError`) goes to ``SpinOptions/onEffectError``.
    ///
    /// - Parameters:
    ///   - effect: called once per loop; its events are emitted.
    ///   - queue: where the iteration's code runs; nil: the global
    ///     concurrent executor.
    public init<Events: AsyncSequence & SendableMetatype>(
        effect: @escaping @Sendable () -> Events,
        on queue: DispatchQueue? = nil
    ) where Events.Element == Event {
        self.init(
            effect: .source({ emitter in
                for try await event in effect() {
                    if await !emitter.send(event) { return }
                }
            }),
            queue: queue,
            strategy: .continueOnNewState)
    }

    /// Creates a feedback from an effect that takes no state and returns at
    /// most one event: called once, when the loop delivers its initial
    /// state (a start-up event such as `.load`), as a `Task` whose code runs
    /// on `queue` when one is named.
    ///
    /// - Parameters:
    ///   - effect: called once per loop; the event it returns, if any, is
    ///     emitted (or discarded if the loop stopped meanwhile).
    ///   - queue: where the effect runs; nil: the global concurrent executor.
    public init(
        effect: @escaping @Sendable () -> Event?,
        on queue: DispatchQueue? = nil
    ) {
        self.init(
            effect: .source({ emitter in
                if let event = effect() { _ = await emitter.send(event) }
            }),
            queue: queue,
            strategy: .continueOnNewState)
    }

    /// Creates one feedback out of several: a spin runs each of `effects`
    /// as a feedback of its own, in this order (Spin.Swift's
    /// `Feedback(effects:)`).
    ///
    /// A spin lists the parts in ``Spin/feedbacks`` in place of the merged
    /// feedback, so a part's ``EffectError/feedbackIndex`` is its position in
    /// that flattened list. ``execute(on:)`` and ``executeOnReducerThread()``
    /// on the merged feedback apply to every part.
    ///
    /// - Parameter effects: the feedbacks, each keeping its own queue,
    ///   filter and execution strategy.
    public init(effects: [Feedback]) {
        self.init(effect: .merged(effects), queue: nil, strategy: .continueOnNewState)
    }

    /// Creates the feedback of a user interface (Spin.Swift's
    /// `Feedback(uiEffects:_:on:)`): a render-only effect that sees every
    /// state, and an event source subscribed once for the loop's life (the
    /// user's input), both on `queue`.
    ///
    /// - Parameters:
    ///   - stateEffect: renders each state.
    ///   - eventEffect: the user's events; called once per loop.
    ///   - queue: where both run (e.g. `.main`); nil: the loop's executor
    ///     for the renderer, the global concurrent executor for the events.
    public init<Events: AsyncSequence & SendableMetatype>(
        uiEffects stateEffect: @escaping @Sendable (State) -> Void,
        _ eventEffect: @escaping @Sendable () -> Events,
        on queue: DispatchQueue? = nil
    ) where Events.Element == Event {
        self.init(effects: [
            Feedback(effect: stateEffect, on: queue),
            Feedback(effect: eventEffect, on: queue),
        ])
    }
}
