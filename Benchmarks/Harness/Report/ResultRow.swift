/// Latency percentiles over the repetitions (each a median, min and max of
/// the per-repetition figure).
struct LatencySpread: Sendable {
    var p50: Spread<UInt64>
    var p99: Spread<UInt64>
    var p999: Spread<UInt64>
    var max: Spread<UInt64>
}

/// An engine's latency percentiles against the yardstick's, round by
/// round (the two ran back to back): in how many rounds this engine's was
/// at or below the yardstick's, and the median over the rounds of the
/// difference. Two engines whose percentiles differ by less than a round's
/// own spread draw lots here, which the medians of a run hide.
struct PairedLatency: Sendable {
    let rounds: Int
    let p50AtOrBelow: Int
    let p99AtOrBelow: Int
    /// Median over the rounds of this engine's minus the yardstick's, in ns.
    let p50Difference: Double
    let p99Difference: Double

    /// nil when either is empty. Round k of each is paired.
    init?(own: [LatencySummary], yardstick: [LatencySummary]) {
        let pairs = Array(zip(own, yardstick))
        guard !pairs.isEmpty else { return nil }
        rounds = pairs.count
        p50AtOrBelow = pairs.count(where: { $0.0.p50 <= $0.1.p50 })
        p99AtOrBelow = pairs.count(where: { $0.0.p99 <= $0.1.p99 })
        p50Difference = Spread(pairs.map { Double($0.0.p50) - Double($0.1.p50) }).median
        p99Difference = Spread(pairs.map { Double($0.0.p99) - Double($0.1.p99) }).median
    }
}

/// One scenario on one engine, over all its repetitions: the unit of every
/// report (console, JSON, Markdown, chart).
struct ResultRow: Sendable {
    let scenario: String
    let engine: String
    let producers: Int
    /// Events per repetition (what the rate counts; see the scenario).
    let events: Int
    let repetitions: Int
    let eventsPerSecond: Spread<Double>
    let latency: LatencySpread?
    /// Median over repetitions of allocating calls / events (nil: not counted here).
    let allocationsPerEvent: Double?
    /// Median over repetitions of the allocating calls and frees in the region.
    let allocations: Int?
    let frees: Int?
    /// The largest per-repetition peak RSS.
    let peakRSSBytes: Int?
    /// The largest per-repetition growth: peak RSS − RSS when the run began.
    let peakRSSGrowthBytes: Int?
    /// Median over repetitions of each scenario-specific counter.
    let counters: [String: Int]
    /// Median over repetitions of each scenario-specific figure.
    let figures: [String: Double]
    /// Median events/s over the scenario's yardstick engine's (`baseline`
    /// for the queue scenarios, `dispatch` for the many-loop ones), same
    /// scenario, same run.
    var ratioToBaseline: Double?
    /// Round by round: this engine's events/s over the yardstick's in the
    /// same round (the two ran back to back), median, min and max over the
    /// rounds. A second reading of the ratio for machines with slow and
    /// fast phases: a phase longer than a round shifts both of its runs,
    /// where the two medians of `ratioToBaseline` may come from different
    /// phases. (Phases shorter than a run widen both.)
    var pairedRatio: Spread<Double>?
    /// Round by round, for a latency scenario: this engine's percentiles
    /// against the yardstick's of the same round (nil without latencies or
    /// for the yardstick itself).
    var pairedLatency: PairedLatency?
    /// The engine `ratioToBaseline` is read against.
    let yardstick: String?
    /// Every measured repetition, in the order run.
    let samples: [Sample]

    init(scenario: Scenario, engine: Engine, samples: [Sample]) {
        precondition(!samples.isEmpty, "a result needs at least one repetition")
        self.scenario = scenario.name
        self.engine = engine.rawValue
        yardstick = scenario.yardstick?.rawValue
        producers = scenario.producers
        let events = samples[0].events
        self.events = events
        repetitions = samples.count
        eventsPerSecond = Spread(samples.map(\.eventsPerSecond))
        let latencies = samples.compactMap(\.latency)
        latency = latencies.count == samples.count
            ? LatencySpread(
                p50: Spread(latencies.map(\.p50)), p99: Spread(latencies.map(\.p99)),
                p999: Spread(latencies.map(\.p999)), max: Spread(latencies.map(\.max)))
            : nil
        let counts = samples.compactMap(\.allocations)
        if counts.count == samples.count {
            allocationsPerEvent = Spread(counts.map { Double($0.allocatingCalls) / Double(max(events, 1)) }).median
            allocations = Int(Spread(counts.map { UInt64($0.allocatingCalls) }).median)
            frees = Int(Spread(counts.map { UInt64($0.frees) }).median)
        } else {
            allocationsPerEvent = nil
            allocations = nil
            frees = nil
        }
        let peaks = samples.compactMap(\.peakRSSBytes)
        peakRSSBytes = peaks.count == samples.count ? peaks.max() : nil
        let growths = samples.compactMap { sample in
            sample.peakRSSBytes.flatMap { peak in sample.startRSSBytes.map { max(0, peak - $0) } }
        }
        peakRSSGrowthBytes = growths.count == samples.count ? growths.max() : nil
        var counters: [String: Int] = [:]
        for key in Set(samples.flatMap(\.counters.keys)) {
            counters[key] = Int(Spread(samples.map { UInt64(max(0, $0.counters[key] ?? 0)) }).median)
        }
        self.counters = counters
        var figures: [String: Double] = [:]
        for key in Set(samples.flatMap(\.figures.keys)) {
            figures[key] = Spread(samples.map { $0.figures[key] ?? 0 }).median
        }
        self.figures = figures
        self.samples = samples
    }
}
