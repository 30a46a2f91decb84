import Spindle

/// `idle-loops-1m`: N counter loops started on the default executor (the
/// shared pool), one event each from one producer thread, then every loop
/// stopped (4,096 stops in flight at a time). What a process with a million
/// mostly idle loops pays.
///
/// Clock: the producer starts → every loop reduced its event. Rate: N /
/// elapsed. Counters: `start_ns` (creating and starting the N loops),
/// `rss_per_loop_bytes` (RSS with every loop idle − RSS before, / N),
/// `threads_added` (peak during the run), `idle_cpu_us_per_s` (process CPU
/// over 1 s with every loop idle), `stop_ns` (stopping all of them).
enum IdleLoopsScenario {
    static let scenario = Scenario(
        name: "idle-loops-1m",
        producers: 1,
        description: """
            N counter loops on the shared pool (the default), one event each from one \
            producer thread, then all stopped. Clock: first emit → every loop reduced. \
            Counters: start time, RSS per idle loop, threads added, CPU/s once idle, stop time.
            """,
        defaultEvents: 1_000_000,
        quickEvents: 20_000,
        engines: [.pool],
        yardstick: nil,
        measure: measure)

    private static func measure(_ run: ScenarioRun) async throws -> Sample {
        let loops = run.events
        let done = Countdown(loops)
        let threadsBefore = ProcessStats.threads() ?? 0
        let rssBefore = PeakMemory.resident() ?? 0
        let sampler = ThreadCountSampler()

        let spin = Spin(initialState: 0, feedbacks: [], reducer: Reducer<Int, Int> { state, _ in
            ManyLoopsScenario.count(state, target: 1, done: done)
        })
        let startBegan = MonotonicClock.now()
        // Concrete loops (8 bytes each), as a user would hold them: an array
        // of existentials would add 32 bytes per loop to the figure.
        var targets: [SpinLoop<Int, Int>] = []
        targets.reserveCapacity(loops)
        for _ in 0..<loops { targets.append(try spin.start(options: run.options(for: Int.self))) }
        let startNanoseconds = MonotonicClock.now() &- startBegan
        let started = targets

        let producer = ProducerThreads(count: 1, name: "idle-loops") { _ in
            for target in started { target.send(1) }
        }
        try await producer.waitUntilReady(in: run)
        let region = MeasuredRegion.begin()
        producer.release()
        try await done.wait(timeout: run.timeout, "\(loops) loops to reduce their event", in: run)
        let (elapsed, allocations) = region.end()
        try await producer.waitUntilFinished(in: run)
        let peakThreads = try await sampler.stop(in: run)

        try? await Task.sleep(for: .milliseconds(100))
        let rssIdle = PeakMemory.resident() ?? rssBefore
        let idleCPU = await ProcessStats.idleCPUMicrosecondsPerSecond()

        let stopBegan = MonotonicClock.now()
        let reduced = await ManyLoopsScenario.stopAll(targets)
        let stopNanoseconds = MonotonicClock.now() &- stopBegan
        try expect(reduced == loops, "reduced \(reduced) of \(loops) events", in: run)
        return Sample(
            events: loops, elapsedNanoseconds: elapsed, allocations: allocations,
            counters: [
                "start_ns": Int(startNanoseconds),
                "rss_per_loop_bytes": max(0, rssIdle - rssBefore) / loops,
                "threads_added": max(0, peakThreads - threadsBefore),
                "idle_cpu_us_per_s": idleCPU,
                "stop_ns": Int(stopNanoseconds),
            ])
    }
}
