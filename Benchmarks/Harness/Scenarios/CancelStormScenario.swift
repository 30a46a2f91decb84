import Spindle

/// The storm's state: ticks from the producer, and the latest tick an
/// effect run answered.
struct StormState: Sendable, Equatable {
    var ticks = 0
    var answered = 0
    var answers = 0
}

enum StormEvent: Sendable {
    case tick
    case answer(tick: Int)
}

/// `cancel-storm`: one producer thread emits N ticks as fast as it can; one
/// async feedback with `.cancelOnNewState` starts a run for every state.
/// Each run sleeps 20 µs (`Task.sleep`), then answers `.answer(tick:)`
/// while the state's tick is unanswered. Under the storm almost every run
/// is cancelled by the next state while it sleeps; it swallows the
/// cancellation and answers anyway, and the engine must discard that late
/// event (the contract's rule 4).
///
/// Clock: start gate opens → the feedback runs for the state in which the
/// answer to tick N was reduced, i.e. every state reached the feedback and
/// the last run completed. Rate: N ticks / elapsed. Counters: effect runs
/// started and cancelled and late events discarded (`loop.statistics` at
/// the end of the region), answers reduced (the final state).
enum CancelStormScenario {
    static let scenario = Scenario(
        name: "cancel-storm",
        producers: 1,
        description: """
            1 producer thread emits N ticks; an async feedback (.cancelOnNewState) runs for \
            every state: sleeps 20 µs, then answers (even when cancelled: the engine must \
            discard that late event). Clock: start gate opens → the run after the last \
            answer. Rate: ticks/s. Counters: runs started/cancelled, late events discarded.
            """,
        defaultEvents: 100_000,
        quickEvents: 10_000,
        measure: measure)

    private static let reducer = Reducer<StormState, StormEvent> { state, event in
        var state = state
        switch event {
        case .tick:
            state.ticks += 1
        case .answer(let tick):
            state.answered = max(state.answered, tick)
            state.answers += 1
        }
        return state
    }

    private static func measure(_ run: ScenarioRun) async throws -> Sample {
        let target = run.events
        let primed = Countdown(1)
        let finished = Countdown(1)
        let feedback = Feedback<StormState, StormEvent>(effect: { (state: StormState) async -> StormEvent? in
            if state.ticks == 0 {
                primed.arrive()
                return nil
            }
            if state.ticks == target && state.answered == target {
                finished.arrive()
                return nil
            }
            // A cancelled run wakes at once; it ignores that and answers.
            try? await Task.sleep(for: .microseconds(20))
            return state.answered < state.ticks ? .answer(tick: state.ticks) : nil
        }, applying: .cancelOnNewState)
        let loop = try Spin(initialState: StormState(), feedbacks: [feedback], reducer: reducer).start(options: run.options(for: StormEvent.self))
        let producer = ProducerThreads(count: 1, name: "producer") { _ in
            for _ in 0..<target { loop.emit(.tick) }
        }
        try await primed.wait(timeout: .seconds(30), "the feedback to see the initial state", in: run)
        try await producer.waitUntilReady(in: run)

        let region = MeasuredRegion.begin()
        producer.release()
        try await finished.wait(timeout: run.timeout, "the answer to tick \(target)", in: run)
        let (elapsed, allocations) = region.end()
        let statistics = loop.statistics

        try await producer.waitUntilFinished(in: run)
        let report = await loop.stop()
        let final = loop.state
        try expect(final.ticks == target, "reduced \(final.ticks) ticks, expected \(target)", in: run)
        try expect(report.reduced == target + final.answers,
                   "reduced \(report.reduced) events, expected \(target) ticks + \(final.answers) answers", in: run)
        return Sample(
            events: target, elapsedNanoseconds: elapsed, allocations: allocations,
            counters: [
                "effect_runs_started": statistics.effectRunsStarted,
                "effect_runs_cancelled": statistics.effectRunsCancelled,
                "late_events_discarded": statistics.lateEventsDiscarded,
                "answers_reduced": final.answers,
            ])
    }
}
