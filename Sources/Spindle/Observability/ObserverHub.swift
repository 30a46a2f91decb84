/// A loop's observers, as the engine calls them: one call per callback,
/// fanned out to every observer in installation order.
///
/// Thread safety: immutable after init; each callback is called from the
/// thread ``SpinObserver`` names for it.
final class ObserverHub<State: Sendable, Event: Sendable>: Sendable {
    let all: [any SpinObserver<State, Event>]
    /// The observers that want ``SpinObserver/eventReduced(_:newState:reduction:)``.
    let perEvent: [any SpinObserver<State, Event>]

    /// nil when there is nothing to observe, so the engine keeps its
    /// unobserved path.
    init?(_ observers: [any SpinObserver<State, Event>]) {
        guard !observers.isEmpty else { return nil }
        all = observers
        perEvent = observers.filter(\.observesEachEvent)
    }

    var wantsEachEvent: Bool { !perEvent.isEmpty }

    func loopStarted(initialState: State) {
        for observer in all { observer.loopStarted(initialState: initialState) }
    }

    func eventReduced(_ event: Event, newState: State, reduction: Int) {
        for observer in perEvent { observer.eventReduced(event, newState: newState, reduction: reduction) }
    }

    func eventAccepted(_ event: Event) {
        for observer in perEvent { observer.eventAccepted(event) }
    }

    func batchReduced(_ batch: ReductionBatch) {
        for observer in all { observer.batchReduced(batch) }
    }

    func eventDropped(_ event: Event) {
        for observer in all { observer.eventDropped(event) }
    }

    func eventRejected(_ event: Event) {
        for observer in all { observer.eventRejected(event) }
    }

    func eventDiscardedAtStop(_ event: Event) {
        for observer in all { observer.eventDiscardedAtStop(event) }
    }

    func effectStarted(_ run: EffectRun) {
        for observer in all { observer.effectStarted(run) }
    }

    func effectCancelled(_ run: EffectRun) {
        for observer in all { observer.effectCancelled(run) }
    }

    func effectFinished(_ run: EffectRun) {
        for observer in all { observer.effectFinished(run) }
    }

    func effectFailed(_ run: EffectRun, error: any Error) {
        for observer in all { observer.effectFailed(run, error: error) }
    }

    func lateEventDiscarded(_ event: Event, from run: EffectRun) {
        for observer in all { observer.lateEventDiscarded(event, from: run) }
    }

    func loopStopped(_ report: StopReport) {
        for observer in all { observer.loopStopped(report) }
    }
}
