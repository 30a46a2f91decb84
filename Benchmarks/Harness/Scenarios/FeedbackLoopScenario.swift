import Spindle

/// The counter's one event.
enum CounterEvent: Sendable {
    case increment
}

/// `feedback-loop` and `feedback-loop-inline`: a counter whose one feedback
/// (a synchronous effect) emits `.increment` for every state until N. Every
/// reduction is a round trip reducer → feedback → emit → queue → reducer.
///
/// The feedback answers nothing for the initial state 0, so the loop idles
/// until the clock starts; the harness waits until the feedback has seen
/// state 0 (its queue has run once), begins the region and emits the first
/// `.increment`. Clock: first emit → the feedback sees state N (the N-th
/// reduction). Rate: N reductions / elapsed. Checked: stop reports exactly
/// N reductions and the final state is N.
///
/// `feedback-loop` dispatches the effect to the feedback's own serial queue
/// (the default); `feedback-loop-inline` runs it on the reducer thread with
/// `executeOnReducerThread()`.
enum FeedbackLoopScenario {
    static func make(inline: Bool) -> Scenario {
        Scenario(
            name: inline ? "feedback-loop-inline" : "feedback-loop",
            producers: 1,
            description: inline
                ? """
                  As feedback-loop, with the feedback on the reducer thread \
                  (.executeOnReducerThread()): no dispatch, no thread hop.
                  """
                : """
                  A counter whose one feedback (sync effect on its own serial queue) emits \
                  .increment for every state until N. Clock: first emit → the feedback sees \
                  state N. Rate: reductions/s of the reducer → feedback → queue round trip.
                  """,
            defaultEvents: inline ? 4_000_000 : 500_000,
            quickEvents: inline ? 400_000 : 50_000,
            measure: { run in try await measure(run, inline: inline) })
    }

    private static let reducer = Reducer<Int, CounterEvent> { count, _ in count + 1 }

    private static func measure(_ run: ScenarioRun, inline: Bool) async throws -> Sample {
        let target = run.events
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
        if inline { feedback = feedback.executeOnReducerThread() }
        let loop = Spin(initialState: 0, feedbacks: [feedback], reducer: reducer).start(options: run.options)
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
