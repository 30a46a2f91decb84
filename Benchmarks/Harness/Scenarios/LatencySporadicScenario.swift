import CSPSCProbe
import Dispatch
import Foundation
import Histogram
import Spindle
import Synchronization

/// The round trip of a loop that waits for its next event: a producer thread
/// sleeps (100 µs or 1 ms), stamps an event, emits it, and polls until an
/// observer on the loop's executor has published that event's state; then
/// it records emit → observed and sleeps again. Between two events the loop
/// is idle long enough for its executor's thread to park: the round trip
/// includes waking it. The crowded variants run the same with two CPU-bound
/// threads of the harness's own spinning beside it for the whole
/// measurement (the closed one with no pause, `latency-closed-observer`'s
/// shape).
///
/// Engines: `pool` (the default executor), `dedicated`, `serial-queue` (the
/// `.queue(DispatchQueue)` executor), the yardstick `dispatch` (one serial
/// `DispatchQueue`, one `async` per event doing `state = reduce(state,
/// event)` and publishing the count: the plain-Swift answer) and `futex`
/// (the limit, not an engine: `cfutex_sporadic_run`, two wake-ups of a
/// parked thread per round trip) and `futex-one-wake` (the floor: the same
/// with the producer polling, one wake-up per round trip, as every engine
/// here pays).
///
/// Counters per round trip (over the process, every thread): voluntary
/// context switches (a thread that parks or sleeps: the producer's own sleep
/// is one), involuntary ones (preemptions), and the machine's steal time.
struct LatencySporadicScenario {
    /// The producer's sleep before each event (0: none).
    let pauseNanoseconds: UInt64
    /// Two CPU-bound threads run beside the measurement.
    let crowded: Bool

    static let sporadic100us = LatencySporadicScenario(pauseNanoseconds: 100_000, crowded: false).make(
        name: "latency-sporadic-100us",
        description: """
            Closed round trips of a loop that goes idle between events: a producer thread \
            sleeps 100 µs, emits one stamped event, polls until a SpinObserver (on the loop's \
            executor) has published its state, records emit → observed, repeats N times. \
            Engines: pool, dedicated, serial-queue (.queue executor), dispatch (yardstick: a \
            serial DispatchQueue, one async per event), futex (the limit: a bare C round trip \
            of two futex wake-ups), futex-one-wake (the floor: one futex wake-up, the producer \
            polling). p50/p99/p99.9/max; voluntary and involuntary context \
            switches per round trip (the whole process). Rate: round trips/s.
            """,
        defaultEvents: 10_000,
        quickEvents: 1_000)

    static let sporadic1ms = LatencySporadicScenario(pauseNanoseconds: 1_000_000, crowded: false).make(
        name: "latency-sporadic-1ms",
        description: """
            latency-sporadic-100us with the producer sleeping 1 ms before each event: every \
            executor's thread has long parked. The same engines and counters.
            """,
        defaultEvents: 2_000,
        quickEvents: 300)

    static let crowdedClosed = LatencySporadicScenario(pauseNanoseconds: 0, crowded: true).make(
        name: "latency-crowded-closed",
        description: """
            latency-closed-observer's round trip (no pause: emit, poll until observed, emit \
            again) with two CPU-bound threads of the harness spinning beside it for the whole \
            measurement (both cores taken: the kernel time-slices the loop's thread, the \
            producer and the hogs). The sporadic scenarios' engines and counters.
            """,
        defaultEvents: 20_000,
        quickEvents: 2_000)

    static let crowdedSporadic = LatencySporadicScenario(pauseNanoseconds: 100_000, crowded: true).make(
        name: "latency-crowded-sporadic",
        description: """
            latency-sporadic-100us with two CPU-bound threads of the harness spinning beside \
            it for the whole measurement. The same engines and counters.
            """,
        defaultEvents: 10_000,
        quickEvents: 1_000)

    private func make(name: String, description: String, defaultEvents: Int, quickEvents: Int) -> Scenario {
        Scenario(
            name: name,
            producers: 1,
            description: description,
            defaultEvents: defaultEvents,
            quickEvents: quickEvents,
            engines: [.pool, .dedicated, .serialQueue, .dispatch, .futex, .futexOneWake],
            yardstick: .dispatch,
            measure: { run in try await self.measure(run) })
    }

    /// Where the producer sends and what it polls: a Spindle loop with an
    /// observer, or the `dispatch` yardstick.
    private protocol Target: Sendable {
        /// Emits the `index`-th event (from 1), stamped `sentAt`.
        func send(sentAt: UInt64)
        /// The count of events whose state has been published.
        var published: Int { get }
        /// Ends the target; returns the events it reduced.
        func finish() async -> Int
    }

    private typealias Publisher = LatencyClosedObserverScenario.Publisher

    private struct LoopTarget: Target {
        let loop: SpinLoop<StampState, StampEvent>
        let publisher: Publisher

        func send(sentAt: UInt64) { loop.emit(.stamped(sentAt: sentAt)) }
        var published: Int { publisher.received.load(ordering: .acquiring) }
        func finish() async -> Int { await loop.stop().reduced }
    }

    /// The yardstick: a serial `DispatchQueue` reducing one event per
    /// `async`, publishing the count as the observer does.
    private final class DispatchTarget: Target, @unchecked Sendable {
        // @unchecked: `state` is touched only by blocks on `queue`, a
        // serial queue, which orders them.
        private let queue = DispatchQueue(label: "latency-sporadic-dispatch")
        private var state = StampState()
        private let received = Atomic<Int>(0)

        func send(sentAt: UInt64) {
            queue.async {
                self.state = StampState.reduce(self.state, .stamped(sentAt: sentAt))
                self.received.store(self.state.received, ordering: .releasing)
            }
        }

        var published: Int { received.load(ordering: .acquiring) }

        func finish() async -> Int {
            await withCheckedContinuation { continuation in
                queue.async { continuation.resume(returning: self.state.received) }
            }
        }
    }

    /// The producer thread's results, read after it finished.
    private final class Outcome: @unchecked Sendable {
        // @unchecked: written by the producer thread only, read after
        // `waitUntilFinished` (which orders the reads after the writes).
        var histogram = LatencySummary.makeHistogram()
        var mismatched = 0
    }

    private func measure(_ run: ScenarioRun) async throws -> Sample {
        let hogs = crowded ? CrowdingThreads(count: 2) : nil
        defer { hogs?.stop() }
        if run.engine == .futex || run.engine == .futexOneWake { return try measureFutex(run) }
        let count = run.events
        let target: any Target
        if run.engine == .dispatch {
            target = DispatchTarget()
        } else {
            let publisher = Publisher()
            let loop = try Spin(initialState: StampState(), feedbacks: [], reducer: Reducer(StampState.reduce))
                .observed(by: publisher)
                .start(options: run.options(for: StampEvent.self))
            target = LoopTarget(loop: loop, publisher: publisher)
        }
        let outcome = Outcome()
        let pause = pauseNanoseconds
        let producer = ProducerThreads(count: 1, name: "sporadic") { _ in
            for index in 1...count {
                if pause > 0 { Self.sleep(nanoseconds: pause) }
                let sentAt = MonotonicClock.now()
                target.send(sentAt: sentAt)
                while target.published < index {}
                let seenAt = MonotonicClock.now()
                if target.published != index { outcome.mismatched += 1 }
                _ = outcome.histogram.record(seenAt &- sentAt)
            }
        }
        try await producer.waitUntilReady(in: run)
        let switches = ContextSwitches.begin()
        let region = MeasuredRegion.begin()
        producer.release()
        try await producer.waitUntilFinished(in: run)
        let (elapsed, allocations) = region.end()
        let counters = switches.end(roundTrips: count)

        let reduced = await target.finish()
        try expect(reduced == count, "reduced \(reduced) of \(count) events", in: run)
        try expect(outcome.mismatched == 0, "\(outcome.mismatched) round trips saw another event's state", in: run)
        try expect(outcome.histogram.totalCount == UInt64(count),
                   "recorded \(outcome.histogram.totalCount) of \(count) round trips", in: run)
        return Sample(
            events: count, elapsedNanoseconds: elapsed, allocations: allocations,
            latency: LatencySummary(outcome.histogram), counters: counters)
    }

    /// The `futex` and `futex-one-wake` engines: the same pause through
    /// `cfutex_sporadic_run` or `cfutex_one_wake_run`.
    private func measureFutex(_ run: ScenarioRun) throws -> Sample {
        let count = run.events
        var latencies = [UInt64](repeating: 0, count: count)
        let switches = ContextSwitches.begin()
        let elapsed = latencies.withUnsafeMutableBufferPointer { buffer in
            run.engine == .futex
                ? cfutex_sporadic_run(UInt64(count), pauseNanoseconds, buffer.baseAddress!)
                : cfutex_one_wake_run(UInt64(count), pauseNanoseconds, buffer.baseAddress!)
        }
        let counters = switches.end(roundTrips: count)
        try expect(elapsed > 0, "the futex probe could not run (a thread refused, or a request out of order)", in: run)
        var histogram = LatencySummary.makeHistogram()
        for latency in latencies { _ = histogram.record(latency) }
        // Allocations: none to count (the probe allocates its pair once).
        return Sample(
            events: count, elapsedNanoseconds: elapsed, allocations: nil,
            latency: LatencySummary(histogram), counters: counters)
    }

    /// Sleeps the calling thread (a relative `nanosleep`, as a producer that
    /// waits for its next input would).
    static func sleep(nanoseconds: UInt64) {
        var request = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
    }
}

/// CPU-bound threads of the harness's own, for the crowded scenarios: each
/// spins on arithmetic until stopped, as another process's work would.
final class CrowdingThreads: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let ended = DispatchSemaphore(value: 0)
    private let count: Int

    /// Starts `count` threads and returns once each runs.
    init(count: Int) {
        self.count = count
        let started = DispatchSemaphore(value: 0)
        for index in 0..<count {
            let thread = Thread { [self] in
                Thread.current.name = "crowding-\(index)"
                started.signal()
                var value: UInt64 = 0x9E37_79B9_7F4A_7C15
                while !stopped.load(ordering: .relaxed) {
                    for _ in 0..<1_000 { value = value &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407 }
                }
                // Keeps the arithmetic from being optimized away.
                if value == 1 { print("", terminator: "") }
                ended.signal()
            }
            thread.start()
        }
        for _ in 0..<count { started.wait() }
    }

    /// Stops the threads and returns once each has ended.
    func stop() {
        stopped.store(true, ordering: .relaxed)
        for _ in 0..<count { ended.wait() }
    }
}
