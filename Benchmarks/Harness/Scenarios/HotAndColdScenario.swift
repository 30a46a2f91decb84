import Histogram
import Spindle
import Synchronization

/// `hot-and-cold`: one loop flooded by a producer thread while 1,000 other
/// loops on the same pool each get one event per millisecond from a second
/// producer thread (an absolute 1 ms schedule: every tick, one stamped event
/// to each cold loop; between ticks that thread sleeps, as a timer thread
/// would — polling the clock would take a core from a 2-core machine's pool). Measured: the cold loops' emit → reduced latency,
/// recorded by a feedback on each cold loop's executor into that loop's own
/// buffer (one runner at a time), merged into one HdrHistogram afterwards.
///
/// What it shows: whether a flooded loop starves the others on a shared
/// pool (it gets at most a budget of events per turn, then goes to the back
/// of the ready queue). N is the cold events (1,000 × ticks). Clock: the
/// producers start → the last cold tick is reduced. Rate: cold events /
/// elapsed. Counters: `hot_events_per_second` (the hot loop's own rate in
/// that window), `cold_over_1ms` (cold events slower than 1 ms).
enum HotAndColdScenario {
    static let coldLoops = 1_000

    static let scenario = Scenario(
        name: "hot-and-cold",
        producers: 2,
        description: """
            One loop flooded by a producer thread while 1,000 cold loops on the same pool \
            each get one stamped event per ms from a second producer. Latency: the cold \
            loops' emit → reduced (p50/p99/max). N: cold events (1,000 × ticks).
            """,
        defaultEvents: 2_000_000,
        quickEvents: 100_000,
        engines: [.pool],
        yardstick: nil,
        measure: measure)

    /// One cold loop's latencies, written only by its feedback on the loop's
    /// executor (one runner at a time) and read after the loop stopped.
    private final class ColdRecorder: @unchecked Sendable {
        // @unchecked: see the type's comment; the scheduling protocol orders
        // consecutive runners, and stop() returns after the last slice.
        var latencies: [UInt64] = []
        init(capacity: Int) { latencies.reserveCapacity(capacity) }
    }

    private static func measure(_ run: ScenarioRun) async throws -> Sample {
        let ticks = max(1, run.events / coldLoops)
        let coldEvents = ticks * coldLoops
        let coldDone = Countdown(coldLoops)
        let hotRunning = Atomic<Bool>(true)

        let hot = try Spin(initialState: 0, feedbacks: [], reducer: Reducer<Int, Int> { state, _ in state &+ 1 })
            .start(options: run.options(for: Int.self))
        var recorders: [ColdRecorder] = []
        var cold: [SpinLoop<StampState, StampEvent>] = []
        for _ in 0..<coldLoops {
            let recorder = ColdRecorder(capacity: ticks)
            recorders.append(recorder)
            let record = Feedback<StampState, StampEvent>(effect: { (state: StampState) -> StampEvent? in
                guard state.received > 0 else { return nil }
                recorder.latencies.append(MonotonicClock.now() &- state.sentAt)
                if state.received == ticks { coldDone.arrive() }
                return nil
            })
            cold.append(try Spin(initialState: StampState(), feedbacks: [record], reducer: Reducer(StampState.reduce))
                .start(options: run.options(for: StampEvent.self)))
        }
        let coldLoopsStarted = cold

        let producers = ProducerThreads(count: 2, name: "hot-and-cold") { index in
            if index == 0 {
                while hotRunning.load(ordering: .relaxed) { hot.emit(1) }
                return
            }
            var slot = MonotonicClock.now()
            for _ in 0..<ticks {
                MonotonicClock.sleep(until: slot)
                for loop in coldLoopsStarted { loop.emit(.stamped(sentAt: MonotonicClock.now())) }
                slot &+= 1_000_000
            }
        }
        try await producers.waitUntilReady(in: run)
        let hotBefore = hot.statistics.reducedEvents
        let noise = SchedulerNoise.begin()
        let region = MeasuredRegion.begin()
        producers.release()
        try await coldDone.wait(timeout: run.timeout, "the cold loops' \(ticks) ticks", in: run)
        let (elapsed, allocations) = region.end()
        let counters = noise.end()
        let hotReduced = hot.statistics.reducedEvents - hotBefore
        hotRunning.store(false, ordering: .relaxed)
        try await producers.waitUntilFinished(in: run)

        _ = await hot.stop()
        var reduced = 0
        for loop in cold { reduced += await loop.stop().reduced }
        try expect(reduced == coldEvents, "cold loops reduced \(reduced) of \(coldEvents) events", in: run)
        var histogram = LatencySummary.makeHistogram()
        var over1ms = 0
        for recorder in recorders {
            for latency in recorder.latencies {
                _ = histogram.record(latency)
                if latency > 1_000_000 { over1ms += 1 }
            }
        }
        try expect(histogram.totalCount == UInt64(coldEvents),
                   "recorded \(histogram.totalCount) of \(coldEvents) cold latencies", in: run)
        return Sample(
            events: coldEvents, elapsedNanoseconds: elapsed, allocations: allocations,
            latency: LatencySummary(histogram),
            counters: counters.merging([
                "hot_events_per_second": Int(Double(hotReduced) / (Double(elapsed) / 1e9)),
                "cold_over_1ms": over1ms,
            ]) { $1 })
    }
}
