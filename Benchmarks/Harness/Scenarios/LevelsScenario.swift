import Dispatch
import Spindle

/// The levels example of the Getting started article (DocC), verbatim: two levels, one feedback raising
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

/// `levels`: the Getting started article's two-feedback spin with left 0, right N.
///
/// Each feedback sees every state and answers every state where
/// left < right. There are exactly N such states (each reduction moves
/// left − right up by one), so the loop reduces exactly 2N events and ends
/// at left − right = N, the levels crossed by the events already in flight
/// when they met. Rate: 2N reductions / elapsed.
///
/// Engines: `pool` and `dedicated` (the feedbacks run on the loop's
/// executor, the default placement) and `queued` (each feedback on a serial
/// queue of its own, `execute(on:)`). The feedbacks do not answer the
/// initial state themselves: the harness answers it for both (one
/// `.increaseLeft`, one `.decreaseRight`) when the clock starts, so start-up
/// is not timed and nothing blocks an executor. Clock: those two emits → a
/// feedback sees the final state. Checked: exactly 2N reductions.
enum LevelsScenario {
    static let scenario = Scenario(
        name: "levels",
        producers: 1,
        description: """
            The levels spin of the Getting started article (two sync feedbacks) with left 0, right N: exactly 2N \
            reductions. Engines: pool and dedicated (feedbacks on the loop's executor, the \
            default), queued (each feedback on its own serial queue). Clock: the harness \
            answers the initial state for both feedbacks → a feedback sees the final state. \
            Rate: reductions/s.
            """,
        defaultEvents: 1_000_000,
        quickEvents: 25_000,
        engines: [.pool, .dedicated, .queued],
        yardstick: nil,
        measure: measure)

    private static func measure(_ run: ScenarioRun) async throws -> Sample {
        let right = run.events
        let reductions = 2 * right
        let primed = Countdown(2)
        let finished = Countdown(1)
        let initial = Levels(left: 0, right: right)
        // The article's effects, with the harness's hooks around them: the
        // initial state is answered by the harness; signal the final state.
        let observe = { @Sendable (state: Levels) -> Bool in
            if state == initial {
                primed.arrive()
                return false
            }
            if state.left - state.right == right { finished.arrive() }
            return true
        }
        var left = Feedback<Levels, LevelsEvent>(effect: { (state: Levels) -> LevelsEvent? in
            observe(state) ? leftEffect(state) : nil
        })
        var rightFeedback = Feedback<Levels, LevelsEvent>(effect: { (state: Levels) -> LevelsEvent? in
            observe(state) ? rightEffect(state) : nil
        })
        if run.engine == .queued {
            left = left.execute(on: DispatchQueue(label: "levels.left"))
            rightFeedback = rightFeedback.execute(on: DispatchQueue(label: "levels.right"))
        }
        let spin = Spin(initialState: initial, feedbacks: [left, rightFeedback], reducer: Reducer(levelsReducer))
        let loop = try spin.start(options: run.options(for: LevelsEvent.self))
        try await primed.wait(timeout: .seconds(30), "both feedbacks to see the initial state", in: run)

        let region = MeasuredRegion.begin()
        loop.emit(leftEffect(initial)!)
        loop.emit(rightEffect(initial)!)
        try await finished.wait(timeout: run.timeout, "the final state (left − right = \(right))", in: run)
        let (elapsed, allocations) = region.end()

        let report = await loop.stop()
        let final = loop.state
        try expect(report.reduced == reductions, "reduced \(report.reduced) events, expected \(reductions)", in: run)
        try expect(final.left - final.right == right, "final state \(final), expected left − right = \(right)", in: run)
        return Sample(events: reductions, elapsedNanoseconds: elapsed, allocations: allocations)
    }
}
