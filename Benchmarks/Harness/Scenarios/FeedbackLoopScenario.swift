import Dispatch
import Spindle

/// The counter's one event.
enum CounterEvent: Sendable {
    case increment
}

/// `feedback-loop`: a counter whose one feedback (a synchronous effect)
/// emits `.increment` for every state until N. Every reduction is a round
/// trip reducer → feedback → emit → reducer.
///
/// The feedback answers nothing for the initial state 0, so the loop idles
/// until the clock starts; the harness waits until the feedback has seen
/// state 0, begins the region and emits the first `.increment`. Clock:
/// first emit → the feedback sees state N (the N-th reduction). Rate: N
/// reductions / elapsed. Checked: stop reports exactly N reductions and the
/// final state is N.
///
/// Engines: `pool` and `dedicated` run the feedback on the loop's executor
/// (the default placement, as Spin runs feedbacks on the spin's own
/// scheduler); `queued` puts it on a serial queue of its own
/// (`execute(on:)`), a thread hop each way; it runs at most 100,000
/// reductions (the rate is over the events it ran).
enum FeedbackLoopScenario {
    static let scenario = Scenario(
        name: "feedback-loop",
        producers: 1,
        description: """
            A counter whose one sync feedback emits .increment for every state until N. \
            Engines: pool and dedicated (feedback on the loop's executor, the default), \
            queued (feedback on its own serial queue). Clock: first emit → the feedback sees \
            state N. Rate: reductions/s of the reducer → feedback → reducer round trip.
            """,
        defaultEvents: 4_000_000,
        quickEvents: 50_000,
        engines: [.pool, .dedicated, .queued],
        yardstick: nil,
        measure: measure)

    private static let reducer = Reducer<Int, CounterEvent> { count, _ in count + 1 }

    /// The `queued` engine's round trip crosses two threads each way (tens
    /// of microseconds): it runs at most this many, so a full run stays short.
    static let queuedEventsCap = 100_000

    private static func measure(_ run: ScenarioRun) async throws -> Sample {
        let target = run.engine == .queued ? min(run.events, queuedEventsCap) : run.events
        let primed = Countdown(1)
        let reachedTarget = Countdown(1)
        var feedback = Feedback<Int, CounterEvent>(effect: { (count: Int) -> CounterEvent? in
            if count == 0 {
                primed.arrive()
                return nil
            }
            if count >= target {
                reachedTarget.arrive()
                return nil
            }
            return .increment
        })
        if run.engine == .queued { feedback = feedback.execute(on: DispatchQueue(label: "feedback-loop")) }
        let loop = try Spin(initialState: 0, feedbacks: [feedback], reducer: reducer).start(options: run.options(for: CounterEvent.self))
        try await primed.wait(timeout: .seconds(30), "the feedback to see the initial state", in: run)

        let region = MeasuredRegion.begin()
        loop.emit(.increment)
        try await reachedTarget.wait(timeout: run.timeout, "the feedback to see state \(target)", in: run)
        let (elapsed, allocations) = region.end()

        let report = await loop.stop()
        try expect(report.reduced == target, "reduced \(report.reduced) events, expected \(target)", in: run)
        try expect(loop.state == target, "final state \(loop.state), expected \(target)", in: run)
        return Sample(events: target, elapsedNanoseconds: elapsed, allocations: allocations)
    }
}
