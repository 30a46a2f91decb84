import Dispatch
import Spindle
import Synchronization

/// A counter any thread may bump.
final class SoakCount: Sendable {
    private let value = Atomic<Int>(0)
    var current: Int { value.load(ordering: .acquiring) }
    func add(_ delta: Int = 1) { value.add(delta, ordering: .acquiringAndReleasing) }
    func set(_ newValue: Int) { value.store(newValue, ordering: .releasing) }
}

/// One running soak loop and its books: what producers were told it
/// accepted, what its effects and gears sent back, what its observer saw.
final class SoakLoop: Sendable {
    let generation: Int
    let loop: SpinLoop<SoakState, SoakEvent>
    /// Per producer: items accepted (written by that producer only).
    let accepted: [SoakCount]
    /// Emits answered `.stopped` (producers that raced the churn).
    let rejected = SoakCount()
    /// Echoes that effects and gears returned to the engine.
    let produced = SoakCount()
    /// Reductions the observer saw.
    let observed = SoakCount()
    /// Producers between picking this loop and recording the emit's answer.
    let inFlight = SoakCount()
    /// Reduced states its every-state renderer has not rendered yet (its
    /// share of `SoakBacklog.renders`; a stop drops the ones still queued).
    let rendersOwed = SoakCount()
    private let backlog: SoakBacklog

    init(generation: Int, producers: Int, gear: Gear<SoakPulse>, renderQueue: DispatchQueue,
         conflatedRendering: Bool, reducedTotal: SoakCount, backlog: SoakBacklog) {
        self.generation = generation
        accepted = (0..<producers).map { _ in SoakCount() }
        self.backlog = backlog
        let produced = produced
        let observed = observed
        let rendersOwed = rendersOwed
        // An every-state renderer pays back the render its loop's observer
        // counted for each reduced state (the initial state was never owed).
        let render = Feedback<SoakState, SoakEvent>(effect: { (state: SoakState) in
            if !conflatedRendering, state.items != 0 || state.echoes != 0 {
                rendersOwed.add(-1)
                backlog.renders.add(-1)
            }
        }, on: renderQueue)
        let spin = Spin<SoakState, SoakEvent>(initialState: SoakState()) {
            // On the loop's executor, every state.
            Feedback<SoakState, SoakEvent>(effect: { (state: SoakState) -> SoakEvent? in
                guard state.justReducedItem(every: 32) else { return nil }
                produced.add()
                return .echo
            })
            // Tasks, under both strategies. The first's runs outlast the
            // loop's next few states, which cancel them (their echoes are
            // then discarded as late); the second's go on, unless the stop
            // cancels them.
            Feedback<SoakState, SoakEvent>(
                effect: { (_: SoakState) async -> SoakEvent? in
                    try? await Task.sleep(for: .milliseconds(20))
                    produced.add()
                    return .echo
                },
                filteredBy: { $0.justReducedItem(every: 128) },
                applying: .cancelOnNewState)
            Feedback<SoakState, SoakEvent>(
                effect: { (_: SoakState) async -> SoakEvent? in
                    try? await Task.sleep(for: .milliseconds(2))
                    produced.add()
                    return .echo
                },
                filteredBy: { $0.justReducedItem(every: 256, offset: 64) },
                applying: .continueOnNewState)
            // A renderer on a dispatch queue, every state or the latest.
            conflatedRendering ? render.delivering(.latestState) : render
            // A gear shared with other loops, both ways.
            Feedback<SoakState, SoakEvent>(attachedTo: gear, toGear: { state in
                state.justReducedItem(every: 512, offset: 7) ? SoakPulse() : nil
            })
            Feedback<SoakState, SoakEvent>(attachedTo: gear, fromGear: { _ in
                produced.add()
                return .echo
            })
            Reducer(SoakState.reduce)
        }
        do {
            loop = try spin.observed(by: SoakObserver(
                observed: observed, reducedTotal: reducedTotal, backlog: backlog,
                rendersOwed: conflatedRendering ? nil : rendersOwed)).start()
        } catch {
            fatalError("soak: a loop could not start: \(error)")
        }
    }

    /// Once the loop has stopped: what its renderer will never render (its
    /// stop dropped the states still queued) is no longer owed.
    func forgiveUnrenderedStates() {
        backlog.renders.add(-rendersOwed.current)
        rendersOwed.set(0)
    }

    /// The books of a stopped loop whose producers have all moved on: nil
    /// when they balance, else what does not.
    func imbalance() -> String? {
        let final = loop.state
        let statistics = loop.statistics
        let accepted = accepted.map(\.current)
        let acceptedItems = accepted.reduce(0, +)
        for producer in accepted.indices where Int(final.last[producer]) != accepted[producer] {
            return "producer \(producer): \(accepted[producer]) accepted, last reduced \(final.last[producer])"
        }
        if final.outOfOrder != 0 { return "\(final.outOfOrder) items out of order" }
        if Int(final.items) != acceptedItems {
            return "\(final.items) items reduced, \(acceptedItems) accepted"
        }
        if statistics.reducedEvents != Int(final.items) + Int(final.echoes) {
            return "\(statistics.reducedEvents) reduced, but the state counts \(final.items) items + \(final.echoes) echoes"
        }
        if observed.current != statistics.reducedEvents {
            return "the observer saw \(observed.current) reductions of \(statistics.reducedEvents)"
        }
        // Every echo handed to the engine was reduced, discarded as a
        // cancelled run's, or refused after the stop.
        let refusedEchoes = statistics.rejectedAfterStop - rejected.current
        let accountedEchoes = Int(final.echoes) + statistics.lateEventsDiscarded + refusedEchoes
        if produced.current != accountedEchoes {
            return "\(produced.current) echoes sent, \(accountedEchoes) accounted for (\(final.echoes) reduced, "
                + "\(statistics.lateEventsDiscarded) discarded as late, \(refusedEchoes) refused after stop)"
        }
        return nil
    }
}

/// Counts reductions, per loop and in all, and what they pay back or owe
/// (see `SoakBacklog`).
struct SoakObserver: SpinObserver {
    let observed: SoakCount
    let reducedTotal: SoakCount
    let backlog: SoakBacklog
    /// The loop's owed renders, for an every-state renderer's loop.
    let rendersOwed: SoakCount?

    func eventReduced(_ event: SoakEvent, newState: SoakState, reduction: Int) {
        observed.add()
        reducedTotal.add()
        if case .item = event { backlog.items.add(-1) }
        if let rendersOwed {
            rendersOwed.add()
            backlog.renders.add()
        }
    }
}
