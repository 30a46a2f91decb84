import Dispatch
import Spindle

/// The README's levels example, verbatim: two levels, one feedback raising
/// the left, one lowering the right, until they meet.
struct Levels: Equatable, Sendable {
    var left: Int
    var right: Int
}

enum LevelsEvent: Sendable {
    case increaseLeft
    case decreaseRight
}

@Sendable func levelsReducer(_ state: Levels, _ event: LevelsEvent) -> Levels {
    var state = state
    switch event {
    case .increaseLeft: state.left += 1
    case .decreaseRight: state.right -= 1
    }
    return state
}

@Sendable func leftEffect(_ state: Levels) -> LevelsEvent? {
    state.left < state.right ? .increaseLeft : nil
}

@Sendable func rightEffect(_ state: Levels) -> LevelsEvent? {
    state.left < state.right ? .decreaseRight : nil
}

/// `levels`: the README's two-feedback spin with left 0, right N, each
/// feedback on its own serial queue (the default).
///
/// Each feedback sees every state and answers every state where
/// left < right. There are exactly N such states (each reduction moves
/// left − right up by one), so the loop reduces exactly 2N events and ends
/// at left − right = N, the levels crossed by the events already in flight
/// when they met. Rate: 2N reductions / elapsed.
///
/// Both feedbacks hold at the initial state on a start gate (blocking their
/// queue's thread) until the clock starts, so loop start-up is not timed.
/// Clock: gate opens → a feedback sees the final state. Checked: exactly
/// 2N reductions.
enum LevelsScenario {
    static let scenario = Scenario(
        name: "levels",
        producers: 1,
        description: """
            The README's levels spin (two sync feedbacks, each on its own queue) with \
            left 0, right N. It reduces exactly 2N events (each feedback answers the N \
            states where left < right). Clock: both feedbacks released at the initial \
            state → a feedback sees the final state. Rate: reductions/s.
            """,
        defaultEvents: 250_000,
        quickEvents: 25_000,
        measure: measure)

    private static func measure(_ run: ScenarioRun) async throws -> Sample {
        let right = run.events
        let reductions = 2 * right
        let gate = StartGate()
        let primed = Countdown(2)
        let finished = Countdown(1)
        // The README's effects, with the harness's hooks around them: hold at
        // the initial state until the clock starts; signal the final state.
        let observed = { @Sendable (state: Levels) in
            if state.left == 0 && state.right == right {
                primed.arrive()
                gate.wait()
            } else if state.left - state.right == right {
                finished.arrive()
            }
        }
        let spin = Spin(initialState: Levels(left: 0, right: right)) {
            Feedback(effect: { (state: Levels) -> LevelsEvent? in
                observed(state)
                return leftEffect(state)
            })
            Feedback(effect: { (state: Levels) -> LevelsEvent? in
                observed(state)
                return rightEffect(state)
            })
            Reducer(levelsReducer)
        }
        let loop = spin.start(options: run.options)
        try await primed.wait(timeout: .seconds(30), "both feedbacks to see the initial state", in: run)

        let region = MeasuredRegion.begin()
        gate.open()
        try await finished.wait(timeout: run.timeout, "the final state (left − right = \(right))", in: run)
        let (elapsed, allocations) = region.end()

        let report = await loop.stop()
        let final = loop.state
        try expect(report.reduced == reductions, "reduced \(report.reduced) events, expected \(reductions)", in: run)
        try expect(final.left - final.right == right, "final state \(final), expected left − right = \(right)", in: run)
        return Sample(events: reductions, elapsedNanoseconds: elapsed, allocations: allocations)
    }
}
