import Dispatch
import Spindle
import Synchronization

/// `many-loops-10k` and `many-loops-1k`: L counter loops, N events in total
/// (N / L each) from one producer thread, round robin (event k of every loop,
/// then event k + 1 of every loop), so that most emits find their loop idle
/// and schedule it: the many-small-loops case (a loop per session, device,
/// order), not a batch into one loop.
///
/// Engines: `pool` (the default executor), `dedicated` (a thread per loop),
/// and the yardstick `dispatch`: one serial `DispatchQueue` per loop doing
/// `state = reduce(state, event)` in one `async` per event — the plain-Swift
/// answer. Every engine's reducer is the same function; when a loop's count
/// reaches N / L it counts the loop done (one arrival per loop, the same on
/// every engine), which is how the harness knows everything was reduced.
///
/// Clock: the producer starts → every loop done. Rate: N / elapsed.
/// Counters: `start_ns` (creating and starting the L loops), `threads_added`
/// (peak thread count during the run − the count before the loops, sampled
/// every ms), `rss_per_loop_bytes` (RSS after the run − before the loops,
/// / L), `idle_cpu_us_per_s` (process CPU over the 1 s after every loop went
/// idle, loops still alive), `stop_ns` (stopping every loop, 4,096 stops in flight).
enum ManyLoopsScenario {
    static func make(loops: Int) -> Scenario {
        let name = loops >= 10_000 ? "many-loops-\(loops / 1000)k" : "many-loops-\(loops / 1000)k"
        return Scenario(
            name: name,
            producers: 1,
            description: """
                \(loops) counter loops, N / \(loops) events each, emitted round robin by one \
                producer thread. Engines: pool (default), dedicated (a thread per loop), dispatch \
                (yardstick: a serial DispatchQueue per loop, one async per event). Clock: first \
                emit → every loop reduced its events. Counters: start time, threads added (peak), \
                RSS per loop, CPU/s once idle, stop time.
                """,
            defaultEvents: loops * (loops >= 10_000 ? 10 : 100),
            quickEvents: loops * 2,
            engines: [.pool, .dedicated, .dispatch],
            yardstick: .dispatch,
            measure: { run in try await measure(run, loops: loops) })
    }

    /// The loops' one reducer, on every engine: count, and report the loop
    /// done when it reaches its share.
    @inline(__always)
    static func count(_ state: Int, target: Int, done: Countdown) -> Int {
        let next = state + 1
        if next == target { done.arrive() }
        return next
    }

    private static func measure(_ run: ScenarioRun, loops: Int) async throws -> Sample {
        let perLoop = max(1, run.events / loops)
        let events = perLoop * loops
        let done = Countdown(loops)
        let threadsBefore = ProcessStats.threads() ?? 0
        let rssBefore = PeakMemory.resident() ?? 0
        let sampler = ThreadCountSampler()

        let startBegan = MonotonicClock.now()
        let targets: [any CounterTarget]
        if run.engine == .dispatch {
            targets = (0..<loops).map { index in DispatchCounter(label: "loop-\(index)", target: perLoop, done: done) }
        } else {
            let spin = Spin(initialState: 0, feedbacks: [], reducer: Reducer<Int, Int> { state, _ in
                count(state, target: perLoop, done: done)
            })
            targets = try (0..<loops).map { _ in try spin.start(options: run.options(for: Int.self)) }
        }
        let startNanoseconds = MonotonicClock.now() &- startBegan

        let producer = ProducerThreads(count: 1, name: "many-loops") { _ in
            for _ in 0..<perLoop {
                for target in targets { target.send(1) }
            }
        }
        try await producer.waitUntilReady(in: run)
        let region = MeasuredRegion.begin()
        producer.release()
        try await done.wait(timeout: run.timeout, "\(loops) loops to reduce \(perLoop) events each", in: run)
        let (elapsed, allocations) = region.end()
        try await producer.waitUntilFinished(in: run)

        let peakThreads = try await sampler.stop(in: run)
        let rssAfter = PeakMemory.resident() ?? rssBefore
        // Let spinning threads reach their sleep before measuring idle CPU.
        try? await Task.sleep(for: .milliseconds(100))
        let idleCPU = await ProcessStats.idleCPUMicrosecondsPerSecond()

        let stopBegan = MonotonicClock.now()
        let reduced = await stopAll(targets)
        let stopNanoseconds = MonotonicClock.now() &- stopBegan
        try expect(reduced == events, "reduced \(reduced) of \(events) events", in: run)
        return Sample(
            events: events, elapsedNanoseconds: elapsed, allocations: allocations,
            counters: [
                "start_ns": Int(startNanoseconds),
                "threads_added": max(0, peakThreads - threadsBefore),
                "rss_per_loop_bytes": max(0, rssAfter - rssBefore) / loops,
                "idle_cpu_us_per_s": idleCPU,
                "stop_ns": Int(stopNanoseconds),
            ])
    }

    /// Stops every target, up to 4,096 stops in flight (stops in flight
    /// together share one grace period); returns the events reduced.
    static func stopAll(_ targets: [any CounterTarget]) async -> Int {
        await stopAll(count: targets.count) { await targets[$0].finish() }
    }

    /// Stops Spindle loops held concretely (see `stopAll(_:)`).
    static func stopAll(_ loops: [SpinLoop<Int, Int>]) async -> Int {
        await stopAll(count: loops.count) { await loops[$0].stop().reduced }
    }

    private static func stopAll(count: Int, finish: @escaping @Sendable (Int) async -> Int) async -> Int {
        await withTaskGroup(of: Int.self) { group in
            let lanes = min(4096, count)
            for lane in 0..<lanes {
                group.addTask {
                    var reduced = 0
                    for index in stride(from: lane, to: count, by: lanes) {
                        reduced += await finish(index)
                    }
                    return reduced
                }
            }
            return await group.reduce(0, +)
        }
    }
}

/// A loop the many-loop scenarios drive: a Spindle loop or the yardstick.
protocol CounterTarget: Sendable {
    func send(_ event: Int)
    /// Stops the loop (after every sent event is reduced); returns how many were.
    func finish() async -> Int
}

extension SpinLoop: CounterTarget where State == Int, Event == Int {
    func send(_ event: Int) { emit(event) }
    func finish() async -> Int { await stop().reduced }
}

/// The yardstick: one serial queue per loop, `state = reduce(state, event)`
/// in one `async` per event — as fast as plain Swift makes it (the state
/// lives in the class, touched only on its queue; no locks, no boxing
/// beyond the block GCD itself allocates).
final class DispatchCounter: CounterTarget, @unchecked Sendable {
    // @unchecked: `state` is touched only by blocks on `queue`, a serial
    // queue, which orders them.
    private let queue: DispatchQueue
    private var state = 0
    private let target: Int
    private let done: Countdown

    init(label: String, target: Int, done: Countdown) {
        queue = DispatchQueue(label: label)
        self.target = target
        self.done = done
    }

    func send(_ event: Int) {
        queue.async { self.state = ManyLoopsScenario.count(self.state, target: self.target, done: self.done) }
    }

    func finish() async -> Int {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: self.state) }
        }
    }
}
