import CSPSCProbe
import Histogram
import Spindle

/// `latency-100k`: one producer thread emits N events paced at 100 k/s and
/// stamps each with the monotonic time just before `emit`. A feedback on the
/// loop's executor (the default placement, run right after each
/// reduction) records now − stamp into an HdrHistogram that only that thread
/// touches. Reported: p50 / p99 / p99.9 / max of emit → reduced.
///
/// Pacing: the producer spins on the clock until each event's slot on an
/// absolute 10 µs schedule (sleeping is too coarse at that rate; yielding
/// between polls was tried and made the reducer share the producer's core:
/// p50 went from ~1 µs to ~30 µs). If it falls behind, it emits back to
/// back until it is on schedule again, so a stall shows up as a burst, not
/// as a slower rate. Clock: start gate
/// opens → all reduced (stop drains). Rate: events / elapsed (≈ 100 k/s when
/// the producer kept pace).
///
/// Lead-in: the producer first runs the same schedule for `leadInEvents`
/// (100 ms), whose latencies are not recorded; the N recorded events follow
/// without a break. The samples are of the steady state, not of the
/// kernel placing a new thread: a producer thread is born on its creator's
/// core and shares it with the consumer in time slices until the load
/// balancer moves it, which would put hundreds of samples at a whole time
/// slice, on every engine and on `bare` too (Benchmarks/GOALS.md).
/// The counters (preemptions, steal) and the rate cover the whole run.
///
/// The `bare` engine runs the same schedule with no engine at all
/// (`cspsc_paced_run`: a C producer and consumer, both spinning, over an SPSC
/// ring). Its p50 is the floor of any engine's. Its tail is the machine's:
/// with both cores busy, the kernel's own periodic work (kernel threads,
/// other processes) has no idle core and takes one from one of the two
/// threads, and the events wait for it when that is the consumer. Which core it lands on varies
/// from run to run, so the engines' tails are read against `bare`'s in the
/// same run, repetition spread included.
struct Latency100kScenario {
    /// The schedule: events per second, and the events before the recorded
    /// ones (100 ms of the schedule).
    let ratePerSecond: Int
    let leadInEvents: Int

    static let scenario = Latency100kScenario(ratePerSecond: 100_000, leadInEvents: 10_000).make(
        name: "latency-100k",
        description: """
            1 producer thread paced at 100 k events/s (absolute 10 µs schedule) stamps each \
            event at emit; an inline feedback on the reducer thread records emit → reduced \
            into an HdrHistogram, for the N events after a lead-in of 10,000 on the same \
            schedule (100 ms: the kernel places a new thread). Reports p50/p99/p99.9/max, and how many samples per \
            million took over 100 µs (over_100us_per_million), the machine's steal time \
            (steal_per_mille) and the process's involuntary context switches (preemptions) \
            over the window. Rate: achieved events/s. Engine bare (not Spindle): the same \
            paced schedule between two spinning C threads over an SPSC ring, the machine \
            alone (its p50 the floor of any engine's, its tail the machine's noise).
            """,
        defaultEvents: 200_000,
        quickEvents: 20_000)

    /// `latency-5m`: the same at 5 M events/s, a busy loop's latency: its
    /// runner takes several events per look, so this is what waiting for a
    /// batch to form (`ScheduledLoop.waitForBatch`) costs an event.
    static let stream = Latency100kScenario(ratePerSecond: 5_000_000, leadInEvents: 500_000).make(
        name: "latency-5m",
        description: """
            latency-100k at 5 M events/s (absolute 200 ns schedule), a lead-in of 500,000 \
            events (100 ms): the latency of an event in a stream, where the runner takes \
            several events per look and lets batches form between looks (the runner's wait \
            for a batch, at most 2 µs, or 500 ns after a look that found a stream too slow \
            for a batch to form, is what this measures). The same histogram, counters and \
            bare engine.
            """,
        defaultEvents: 2_000_000,
        quickEvents: 200_000)

    private func make(name: String, description: String, defaultEvents: Int, quickEvents: Int) -> Scenario {
        Scenario(
            name: name,
            producers: 1,
            description: description,
            defaultEvents: defaultEvents,
            quickEvents: quickEvents,
            engines: Engine.queues + [.bare],
            measure: { run in try await self.measure(run) })
    }

    /// The latencies of one repetition: the engines' reducer thread, or the
    /// `bare` probe's results.
    ///
    /// `@unchecked Sendable`: written only by the feedback on the loop's
    /// executor (one runner at a time, ordered by the scheduling protocol)
    /// while the loop runs, and read by the harness only after `stop()`
    /// returned (after the loop's last slice).
    private final class Recorder: @unchecked Sendable {
        private(set) var histogram = LatencySummary.makeHistogram()
        /// Samples above 100 µs: on a shared 2-core machine, mostly the
        /// consumer's thread preempted (a time slice costs ~1 ms).
        private(set) var over100us = 0

        func record(_ latency: UInt64) {
            _ = histogram.record(latency)
            if latency > 100_000 { over100us += 1 }
        }

        /// The counters the scenario adds to the scheduler noise.
        func counters(adding noise: [String: Int], events: Int) -> [String: Int] {
            var counters = noise
            counters["over_100us_per_million"] = over100us * 1_000_000 / events
            return counters
        }
    }

    /// The schedule's gap between two events.
    private var intervalNanoseconds: UInt64 { UInt64(1_000_000_000 / ratePerSecond) }

    private func measure(_ run: ScenarioRun) async throws -> Sample {
        if run.engine == .bare { return try measureBare(run) }
        let count = run.events
        let recorder = Recorder()
        let leadIn = leadInEvents
        let record = Feedback<StampState, StampEvent>(effect: { (state: StampState) -> StampEvent? in
            if state.received > leadIn { recorder.record(MonotonicClock.now() &- state.sentAt) }
            return nil
        })
        let spin = Spin(initialState: StampState(), feedbacks: [record], reducer: Reducer(StampState.reduce))
        let loop = try spin.start(options: run.options(for: StampEvent.self))
        let interval = intervalNanoseconds
        let producer = ProducerThreads(count: 1, name: "paced") { _ in
            var slot = MonotonicClock.now()
            for _ in 0..<(leadIn + count) {
                while MonotonicClock.now() < slot {}
                loop.emit(.stamped(sentAt: MonotonicClock.now()))
                slot &+= interval
            }
        }
        try await producer.waitUntilReady(in: run)

        let noise = SchedulerNoise.begin()
        let region = MeasuredRegion.begin()
        producer.release()
        try await producer.waitUntilFinished(in: run)
        let report = await loop.stop()
        let (elapsed, allocations) = region.end()
        let counters = recorder.counters(adding: noise.end(), events: count)

        try expect(report.reduced == leadIn + count, "reduced \(report.reduced) of \(leadIn + count) events", in: run)
        try expect(recorder.histogram.totalCount == UInt64(count),
                   "recorded \(recorder.histogram.totalCount) latencies for \(count) events", in: run)
        return Sample(
            events: leadIn + count, elapsedNanoseconds: elapsed, allocations: allocations,
            latency: LatencySummary(recorder.histogram),
            counters: counters)
    }

    /// The `bare` engine: the same schedule through `cspsc_paced_run`.
    private func measureBare(_ run: ScenarioRun) throws -> Sample {
        let count = run.events
        var latencies = [UInt64](repeating: 0, count: count)
        let noise = SchedulerNoise.begin()
        let region = MeasuredRegion.begin()
        let elapsed = latencies.withUnsafeMutableBufferPointer { buffer in
            cspsc_paced_run(UInt64(leadInEvents), UInt64(count), intervalNanoseconds, buffer.baseAddress!)
        }
        _ = region.end()
        let noiseCounters = noise.end()
        try expect(elapsed > 0, "the paced C probe could not run (a thread refused, or a stamp in the future)", in: run)
        let recorder = Recorder()
        for latency in latencies { recorder.record(latency) }
        // Allocations: none to count (the probe's ring is allocated inside
        // the region, once; the figure would describe the probe, not a path).
        return Sample(
            events: leadInEvents + count, elapsedNanoseconds: elapsed, allocations: nil,
            latency: LatencySummary(recorder.histogram),
            counters: recorder.counters(adding: noiseCounters, events: count))
    }
}
