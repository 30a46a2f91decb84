/// One observer's callbacks as closures, built where the observer's type is
/// known (``Spin/observed(by:)``), so the engine calls them without going
/// through a `any SpinObserver<State, Event>` existential: in the engine's
/// unspecialized generic code, each use of such an existential asked the
/// runtime for its metadata (a hash-table lookup), several times per batch.
struct ObserverCalls<State: Sendable, Event: Sendable>: Sendable {
    let observesEachEvent: Bool
    let loopStarted: @Sendable (State) -> Void
    let loopFailedToStart: @Sendable (SpinExecutorError) -> Void
    let eventAccepted: @Sendable (Event) -> Void
    let eventReduced: @Sendable (Event, State, Int) -> Void
    let batchReduced: @Sendable (ReductionBatch) -> Void
    let eventDropped: @Sendable (Event) -> Void
    let eventRejected: @Sendable (Event) -> Void
    let eventDiscardedAtStop: @Sendable (Event) -> Void
    let effectStarted: @Sendable (EffectRun) -> Void
    let effectCancelled: @Sendable (EffectRun) -> Void
    let effectEmitted: @Sendable (Event, EffectRun) -> Void
    let effectFinished: @Sendable (EffectRun) -> Void
    let effectFailed: @Sendable (EffectRun, any Error) -> Void
    let lateEventDiscarded: @Sendable (Event, EffectRun) -> Void
    let loopStopped: @Sendable (StopReport) -> Void

    init<Observer: SpinObserver>(_ observer: Observer) where Observer.State == State, Observer.Event == Event {
        observesEachEvent = observer.observesEachEvent
        loopStarted = { observer.loopStarted(initialState: $0) }
        loopFailedToStart = { observer.loopFailedToStart($0) }
        eventAccepted = { observer.eventAccepted($0) }
        eventReduced = { observer.eventReduced($0, newState: $1, reduction: $2) }
        batchReduced = { observer.batchReduced($0) }
        eventDropped = { observer.eventDropped($0) }
        eventRejected = { observer.eventRejected($0) }
        eventDiscardedAtStop = { observer.eventDiscardedAtStop($0) }
        effectStarted = { observer.effectStarted($0) }
        effectCancelled = { observer.effectCancelled($0) }
        effectEmitted = { observer.effectEmitted($0, from: $1) }
        effectFinished = { observer.effectFinished($0) }
        effectFailed = { observer.effectFailed($0, error: $1) }
        lateEventDiscarded = { observer.lateEventDiscarded($0, from: $1) }
        loopStopped = { observer.loopStopped($0) }
    }

    /// `first`'s callbacks, then `second`'s. Per-event calls go only to
    /// the observers that observe each event.
    init(_ first: Self, then second: Self) {
        observesEachEvent = first.observesEachEvent || second.observesEachEvent
        switch (first.observesEachEvent, second.observesEachEvent) {
        case (true, true):
            eventAccepted = { first.eventAccepted($0); second.eventAccepted($0) }
            eventReduced = { first.eventReduced($0, $1, $2); second.eventReduced($0, $1, $2) }
            effectEmitted = { first.effectEmitted($0, $1); second.effectEmitted($0, $1) }
        case (true, false):
            (eventAccepted, eventReduced, effectEmitted) = (first.eventAccepted, first.eventReduced, first.effectEmitted)
        default:
            (eventAccepted, eventReduced, effectEmitted) = (second.eventAccepted, second.eventReduced, second.effectEmitted)
        }
        loopStarted = { first.loopStarted($0); second.loopStarted($0) }
        loopFailedToStart = { first.loopFailedToStart($0); second.loopFailedToStart($0) }
        batchReduced = { first.batchReduced($0); second.batchReduced($0) }
        eventDropped = { first.eventDropped($0); second.eventDropped($0) }
        eventRejected = { first.eventRejected($0); second.eventRejected($0) }
        eventDiscardedAtStop = { first.eventDiscardedAtStop($0); second.eventDiscardedAtStop($0) }
        effectStarted = { first.effectStarted($0); second.effectStarted($0) }
        effectCancelled = { first.effectCancelled($0); second.effectCancelled($0) }
        effectFinished = { first.effectFinished($0); second.effectFinished($0) }
        effectFailed = { first.effectFailed($0, $1); second.effectFailed($0, $1) }
        lateEventDiscarded = { first.lateEventDiscarded($0, $1); second.lateEventDiscarded($0, $1) }
        loopStopped = { first.loopStopped($0); second.loopStopped($0) }
    }
}

/// A loop's observers, as the engine calls them: one call per callback,
/// fanned out to every observer in installation order.
///
/// Thread safety: immutable after init; each callback is called from the
/// thread ``SpinObserver`` names for it.
final class ObserverHub<State: Sendable, Event: Sendable>: Sendable {
    /// Every observer's callbacks, composed in installation order.
    private let calls: ObserverCalls<State, Event>
    /// Whether any observer wants ``SpinObserver/eventReduced(_:newState:reduction:)``
    /// and ``SpinObserver/eventAccepted(_:)``.
    let wantsEachEvent: Bool

    /// nil when there is nothing to observe, so the engine keeps its
    /// unobserved path.
    init?(_ observers: [ObserverCalls<State, Event>]) {
        guard var calls = observers.first else { return nil }
        for next in observers.dropFirst() { calls = ObserverCalls(calls, then: next) }
        self.calls = calls
        wantsEachEvent = calls.observesEachEvent
    }

    func loopStarted(initialState: State) { calls.loopStarted(initialState) }
    func loopFailedToStart(_ error: SpinExecutorError) { calls.loopFailedToStart(error) }
    func eventAccepted(_ event: Event) { calls.eventAccepted(event) }
    func eventReduced(_ event: Event, newState: State, reduction: Int) { calls.eventReduced(event, newState, reduction) }
    func batchReduced(_ batch: ReductionBatch) { calls.batchReduced(batch) }
    func eventDropped(_ event: Event) { calls.eventDropped(event) }
    func eventRejected(_ event: Event) { calls.eventRejected(event) }
    func eventDiscardedAtStop(_ event: Event) { calls.eventDiscardedAtStop(event) }
    func effectStarted(_ run: EffectRun) { calls.effectStarted(run) }
    func effectCancelled(_ run: EffectRun) { calls.effectCancelled(run) }
    /// Per-event, as ``eventAccepted(_:)``: only when ``wantsEachEvent``.
    func effectEmitted(_ event: Event, from run: EffectRun) {
        if wantsEachEvent { calls.effectEmitted(event, run) }
    }
    func effectFinished(_ run: EffectRun) { calls.effectFinished(run) }
    func effectFailed(_ run: EffectRun, error: any Error) { calls.effectFailed(run, error) }
    func lateEventDiscarded(_ event: Event, from run: EffectRun) { calls.lateEventDiscarded(event, run) }
    func loopStopped(_ report: StopReport) { calls.loopStopped(report) }
}
