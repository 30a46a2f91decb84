import Dispatch

// How a spin whose reducer has effects (`Reducer(_:effects:)`) gets one
// effect runtime per loop: the reducer carries a factory, and each loop,
// when it starts, asks it for a fresh dispatcher, a reduce function that
// feeds it, and the hooks that connect it to the loop and stop it. A spin
// with a plain reducer has no factory and runs exactly as before.

/// Builds one loop's effect runtime (see `Reducer.loopEffects`).
@usableFromInline
struct LoopEffectsFactory<State, Event>: Sendable {
    /// Makes a new runtime; the argument is the loop's serial queue, if it
    /// runs on one.
    let make: @Sendable (_ defaultQueue: DispatchQueue?) -> LoopEffects<State, Event>
    /// Reduces without a runtime: the next state (nil: unchanged) and the
    /// effects, none handled. For SpindleTesting's `ReducerSpec` (see
    /// `Reducer.nextWithEffects`).
    let next: @Sendable (State, Event) -> (state: State?, effects: [any Sendable])
}

/// One loop's effect runtime, as the loop sees it.
struct LoopEffects<State, Event> {
    /// The loop's reduce function: reduces, then dispatches the effects.
    let reduceInPlace: @Sendable (inout State, UnsafeMutableRawPointer) -> Void
    /// Gives the runtime its way into the loop. Called once, before the
    /// loop's reducer thread starts.
    let connect: (LoopPort<Event>) -> Void
    /// Discards the pending effects and cancels the running handlers. Called
    /// on the reducer thread when the loop stops, after its last reduction;
    /// calls its argument once no handler call is in progress.
    let stop: @Sendable (_ done: @escaping @Sendable () -> Void) -> Void
}

/// What an effect runtime needs of its loop. It holds no strong reference
/// to the loop's core (the core holds the runtime, through its reducer).
struct LoopPort<Event>: Sendable {
    /// The loop's emit (``EmitResult/stopped`` once the loop is gone).
    let emit: @Sendable (Event) -> EmitResult
    /// The loop's error hook.
    let report: @Sendable (EffectError) -> Void
    let counters: LoopCounters
    /// The router's feedback index in `EffectError`s and `EffectRun`s
    /// (`spin.feedbacks.count`; its errors name the router too).
    let feedbackIndex: Int
    /// The loop's observers' effect-run callbacks; nil when the spin has no
    /// observer (see ``SpinObserver``).
    let runs: RunReports<Event>?
    /// SpindleTesting's runner's hooks, when it drives the loop.
    let manual: ManualDrive?
}

/// The effect-run callbacks of a loop's observers, for an effect runtime
/// (which knows the event type, not the state type).
struct RunReports<Event>: Sendable {
    let started: @Sendable (EffectRun) -> Void
    let cancelled: @Sendable (EffectRun) -> Void
    let emitted: @Sendable (Event, EffectRun) -> Void
    let finished: @Sendable (EffectRun) -> Void
    let failed: @Sendable (EffectRun, any Error) -> Void
    let late: @Sendable (Event, EffectRun) -> Void

    init?<State>(_ hub: ObserverHub<State, Event>?) {
        guard let hub else { return nil }
        started = { hub.effectStarted($0) }
        cancelled = { hub.effectCancelled($0) }
        emitted = { hub.effectEmitted($0, from: $1) }
        finished = { hub.effectFinished($0) }
        failed = { hub.effectFailed($0, error: $1) }
        late = { hub.lateEventDiscarded($0, from: $1) }
    }
}

/// A spin as one loop runs it: for a reducer with effects, a copy whose
/// reducer feeds this loop's own effect runtime, and with one more feedback,
/// attached, that stops the runtime when the loop stops.
struct PreparedSpin<State: Sendable, Event: Sendable> {
    let spin: Spin<State, Event>
    private let effects: LoopEffects<State, Event>?

    /// - Parameter loopQueue: the serial queue the loop runs on, if it runs
    ///   on one (``SpinExecutor/queue(_:)``): the default of the effect
    ///   routes that name no queue.
    init(_ spin: Spin<State, Event>, loopQueue: DispatchQueue?) {
        guard let factory = spin.reducer.loopEffects else {
            self.spin = spin
            effects = nil
            return
        }
        let effects = factory.make(loopQueue)
        let stop = effects.stop
        let stopper = Feedback<State, Event>(
            effect: .attached({ _ in AttachedSubscription(cancelThen: stop) }),
            queue: nil,
            strategy: .continueOnNewState)
        var prepared = Spin(
            initialState: spin.initialState,
            feedbacks: spin.feedbacks + [stopper],
            reducer: Reducer(reduce: spin.reducer.reduce, reduceInPlace: effects.reduceInPlace))
        prepared.observers = spin.observers
        self.spin = prepared
        self.effects = effects
    }

    /// Connects the effect runtime (if any) to `core`. Before `core.start`.
    func connect(to core: LoopCore<State, Event>) {
        guard let effects else { return }
        let options = core.options
        let counters = core.counters
        effects.connect(LoopPort(
            emit: { [weak core] event in core?.emitInOrderAcrossThreads(event) ?? .stopped },
            // Without the core: a report may come after the core is gone
            // (from a handler that failed as the loop ended).
            report: { error in
                LoopCore<State, Event>.report(
                    error, options: options, counters: counters,
                    source: "effect router")
            },
            counters: counters,
            feedbackIndex: spin.feedbacks.count - 1,
            runs: RunReports(core.hub),
            manual: core.manualDrive))
    }
}
