import Histogram
import Spindle
import Synchronization

/// `latency-closed-observer`: the closed loop of `latency-closed` through the
/// observer hook instead of `loop.states`. A producer thread emits one
/// stamped event, waits (polling, as a thread that has nothing else to do
/// would) until a `SpinObserver`'s `eventReduced`, called on the loop's
/// executor, has published that event's state, records emit → observed, and
/// emits the next. Reported: p50 / p99 / p99.9 / max, and the mean as the
/// counter `mean_ns`.
///
/// What it shows: the engine's own round trip (emit → schedule → reduce →
/// hook → the producer sees it) without Swift concurrency in the path.
/// Clock: first emit → the N-th state observed. Rate: round trips/s.
enum LatencyClosedObserverScenario {
    static let scenario = Scenario(
        name: "latency-closed-observer",
        producers: 1,
        description: """
            Closed loop through the observer hook: a producer thread emits one event, \
            polls until a SpinObserver's eventReduced (on the loop's executor) has \
            published its state, records emit → observed in an HdrHistogram, repeats N \
            times. Reports p50/p99/p99.9/max and the mean (mean_ns). Rate: round trips/s.
            """,
        defaultEvents: 200_000,
        quickEvents: 20_000,
        measure: measure)

    /// Publishes each reduced state's count for the producer to poll
    /// (`latency-sporadic-*` polls it too).
    final class Publisher: SpinObserver {
        typealias State = StampState
        typealias Event = StampEvent
        let received = Atomic<Int>(0)
        func eventReduced(_ event: StampEvent, newState: StampState, reduction: Int) {
            received.store(newState.received, ordering: .releasing)
        }
    }

    /// The producer thread's results, read after it finished.
    private final class Outcome: @unchecked Sendable {
        // @unchecked: written by the producer thread only, read after
        // `waitUntilFinished` (which orders the reads after the writes).
        var histogram = LatencySummary.makeHistogram()
        var total: UInt64 = 0
        var mismatched = 0
    }

    private static func measure(_ run: ScenarioRun) async throws -> Sample {
        let count = run.events
        let publisher = Publisher()
        let loop = try Spin(initialState: StampState(), feedbacks: [], reducer: Reducer(StampState.reduce))
            .observed(by: publisher)
            .start(options: run.options(for: StampEvent.self))
        let outcome = Outcome()
        let producer = ProducerThreads(count: 1, name: "closed-observer") { _ in
            for index in 1...count {
                let sentAt = MonotonicClock.now()
                loop.emit(.stamped(sentAt: sentAt))
                while publisher.received.load(ordering: .acquiring) < index {}
                let seenAt = MonotonicClock.now()
                if publisher.received.load(ordering: .relaxed) != index { outcome.mismatched += 1 }
                _ = outcome.histogram.record(seenAt &- sentAt)
                outcome.total &+= seenAt &- sentAt
            }
        }
        try await producer.waitUntilReady(in: run)
        let region = MeasuredRegion.begin()
        producer.release()
        try await producer.waitUntilFinished(in: run)
        let (elapsed, allocations) = region.end()

        let report = await loop.stop()
        try expect(report.reduced == count, "reduced \(report.reduced) of \(count) events", in: run)
        try expect(outcome.mismatched == 0, "\(outcome.mismatched) round trips saw another event's state", in: run)
        try expect(outcome.histogram.totalCount == UInt64(count),
                   "recorded \(outcome.histogram.totalCount) of \(count) round trips", in: run)
        return Sample(
            events: count, elapsedNanoseconds: elapsed, allocations: allocations,
            latency: LatencySummary(outcome.histogram),
            counters: ["mean_ns": Int(outcome.total / UInt64(count))])
    }
}
