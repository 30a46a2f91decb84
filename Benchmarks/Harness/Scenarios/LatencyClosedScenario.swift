import Histogram
import Spindle

/// `latency-closed`: a closed loop. The harness emits one stamped event,
/// waits until its state comes out of `loop.states` (the public observer
/// API: an AsyncStream fed by the reducer thread), records the round trip
/// into an HdrHistogram, and emits the next. Reported: p50 / p99 / p99.9 /
/// max of emit → observed.
///
/// The stream is subscribed (and its first state read) before the clock
/// starts. Clock: first emit → the N-th state observed. Rate: round trips/s.
/// Counters, as `latency-sporadic`'s: the process's voluntary context
/// switches per 1,000 round trips (two per round trip when the loop's
/// thread and the awaiting task's cooperative thread both park between
/// events), preemptions, and the machine's steal time.
enum LatencyClosedScenario {
    static let scenario = Scenario(
        name: "latency-closed",
        producers: 1,
        description: """
            Closed loop: emit one event, await its state on loop.states (the observer \
            stream), record emit → observed in an HdrHistogram, repeat N times. Reports \
            p50/p99/p99.9/max. Rate: round trips/s. Counters: the process's voluntary \
            context switches and preemptions per 1k round trips.
            """,
        defaultEvents: 20_000,
        quickEvents: 2_000,
        measure: measure)

    private static func measure(_ run: ScenarioRun) async throws -> Sample {
        let count = run.events
        let loop = try Spin(initialState: StampState(), feedbacks: [], reducer: Reducer(StampState.reduce))
            .start(options: run.options(for: StampEvent.self))
        var states = loop.states().makeAsyncIterator()
        let first = await states.next()
        try expect(first?.received == 0, "the observer's first state is \(String(describing: first))", in: run)
        var histogram = LatencySummary.makeHistogram()

        let switches = ContextSwitches.begin()
        let region = MeasuredRegion.begin()
        for index in 1...count {
            let sentAt = MonotonicClock.now()
            loop.emit(.stamped(sentAt: sentAt))
            var observed: StampState?
            repeat {
                observed = await states.next()
            } while observed.map { $0.received < index } ?? false
            let seenAt = MonotonicClock.now()
            try expect(observed?.received == index, "the observer saw \(String(describing: observed)), expected event \(index)", in: run)
            _ = histogram.record(seenAt &- sentAt)
        }
        let (elapsed, allocations) = region.end()
        let counters = switches.end(roundTrips: count)

        let report = await loop.stop()
        try expect(report.reduced == count, "reduced \(report.reduced) of \(count) events", in: run)
        return Sample(
            events: count, elapsedNanoseconds: elapsed, allocations: allocations,
            latency: LatencySummary(histogram), counters: counters)
    }
}
