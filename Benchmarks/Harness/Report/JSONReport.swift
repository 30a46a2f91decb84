import Foundation

/// `--json PATH`: an array with one object per scenario and engine.
///
/// Keys: scenario, engine, producers, events, repetitions,
/// events_per_second (median), events_per_second_min, events_per_second_max,
/// ratio_to_baseline (or null: to the yardstick engine named in yardstick),
/// paired_ratio_to_baseline (and _min, _max: round by round, or null),
/// paired_latency (or null: round by round against the yardstick's
/// latencies, {rounds, p50_at_or_below, p99_at_or_below,
/// p50_difference_ns, p99_difference_ns}: see `PairedLatency`), latency_ns ({p50, p99, p999, max}: medians,
/// or null), latency_ns_min and latency_ns_max (the same keys, or null),
/// allocations_per_event (or null), allocations and frees (medians, or
/// null), peak_rss_bytes and peak_rss_growth_bytes (peak − RSS at the
/// run's start; or null), counters ({} unless the scenario has some),
/// figures (the same for figures that are not counts: {} or, e.g.,
/// {"recomputations_per_set": 18.5}), date,
/// command, load_average (1-minute, when the run started),
/// repetition_samples (each repetition's events_per_second, elapsed_ns,
/// allocations, peak_rss_bytes, start_rss_bytes, latency_ns).
enum JSONReport {
    private struct Paired: Encodable {
        let rounds: Int
        let p50AtOrBelow: Int
        let p99AtOrBelow: Int
        let p50DifferenceNanoseconds: Double
        let p99DifferenceNanoseconds: Double

        enum CodingKeys: String, CodingKey {
            case rounds
            case p50AtOrBelow = "p50_at_or_below"
            case p99AtOrBelow = "p99_at_or_below"
            case p50DifferenceNanoseconds = "p50_difference_ns"
            case p99DifferenceNanoseconds = "p99_difference_ns"
        }

        init(_ paired: PairedLatency) {
            rounds = paired.rounds
            p50AtOrBelow = paired.p50AtOrBelow
            p99AtOrBelow = paired.p99AtOrBelow
            p50DifferenceNanoseconds = paired.p50Difference
            p99DifferenceNanoseconds = paired.p99Difference
        }
    }

    private struct Latency: Encodable {
        let p50: UInt64
        let p99: UInt64
        let p999: UInt64
        let max: UInt64
    }

    /// One repetition, for analysis beyond medians.
    private struct Repetition: Encodable {
        let sample: Sample

        enum Key: String, CodingKey {
            case eventsPerSecond = "events_per_second"
            case elapsed = "elapsed_ns"
            case allocations
            case peakRSS = "peak_rss_bytes"
            case startRSS = "start_rss_bytes"
            case latency = "latency_ns"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(sample.eventsPerSecond, forKey: .eventsPerSecond)
            try container.encode(sample.elapsedNanoseconds, forKey: .elapsed)
            try container.encode(sample.allocations?.allocatingCalls, forKey: .allocations)
            try container.encode(sample.peakRSSBytes, forKey: .peakRSS)
            try container.encode(sample.startRSSBytes, forKey: .startRSS)
            try container.encode(sample.latency.map { Latency(p50: $0.p50, p99: $0.p99, p999: $0.p999, max: $0.max) }, forKey: .latency)
        }
    }

    private struct Entry: Encodable {
        let row: ResultRow
        let context: RunContext

        enum Key: String, CodingKey {
            case scenario, engine, producers, events, repetitions
            case eventsPerSecond = "events_per_second"
            case eventsPerSecondMin = "events_per_second_min"
            case eventsPerSecondMax = "events_per_second_max"
            case ratioToBaseline = "ratio_to_baseline"
            case pairedRatio = "paired_ratio_to_baseline"
            case pairedRatioMin = "paired_ratio_to_baseline_min"
            case pairedRatioMax = "paired_ratio_to_baseline_max"
            case pairedLatency = "paired_latency"
            case yardstick
            case latency = "latency_ns"
            case latencyMin = "latency_ns_min"
            case latencyMax = "latency_ns_max"
            case allocationsPerEvent = "allocations_per_event"
            case allocations, frees
            case peakRSS = "peak_rss_bytes"
            case peakRSSGrowth = "peak_rss_growth_bytes"
            case counters, figures, date, command
            case loadAverage = "load_average"
            case crossCoreRoundTrip = "cross_core_round_trip_ns"
            case queueCeilingEager = "c_queue_alone_eager_events_per_second"
            case queueCeilingBatched = "c_queue_alone_batched_events_per_second"
            case spscLimit = "spsc_limit_events_per_second"
            case fractionOfSPSCLimit = "fraction_of_spsc_limit"
            case repetitionSamples = "repetition_samples"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(row.scenario, forKey: .scenario)
            try container.encode(row.engine, forKey: .engine)
            try container.encode(row.producers, forKey: .producers)
            try container.encode(row.events, forKey: .events)
            try container.encode(row.repetitions, forKey: .repetitions)
            try container.encode(row.eventsPerSecond.median, forKey: .eventsPerSecond)
            try container.encode(row.eventsPerSecond.min, forKey: .eventsPerSecondMin)
            try container.encode(row.eventsPerSecond.max, forKey: .eventsPerSecondMax)
            // `encode` (not encodeIfPresent) writes nil as null: the keys are always there.
            try container.encode(row.ratioToBaseline, forKey: .ratioToBaseline)
            try container.encode(row.pairedRatio?.median, forKey: .pairedRatio)
            try container.encode(row.pairedRatio?.min, forKey: .pairedRatioMin)
            try container.encode(row.pairedRatio?.max, forKey: .pairedRatioMax)
            try container.encode(row.pairedLatency.map(Paired.init), forKey: .pairedLatency)
            try container.encode(row.yardstick, forKey: .yardstick)
            try container.encode(row.latency.map { Latency(p50: $0.p50.median, p99: $0.p99.median, p999: $0.p999.median, max: $0.max.median) }, forKey: .latency)
            try container.encode(row.latency.map { Latency(p50: $0.p50.min, p99: $0.p99.min, p999: $0.p999.min, max: $0.max.min) }, forKey: .latencyMin)
            try container.encode(row.latency.map { Latency(p50: $0.p50.max, p99: $0.p99.max, p999: $0.p999.max, max: $0.max.max) }, forKey: .latencyMax)
            try container.encode(row.allocationsPerEvent, forKey: .allocationsPerEvent)
            try container.encode(row.allocations, forKey: .allocations)
            try container.encode(row.frees, forKey: .frees)
            try container.encode(row.peakRSSBytes, forKey: .peakRSS)
            try container.encode(row.peakRSSGrowthBytes, forKey: .peakRSSGrowth)
            try container.encode(row.counters, forKey: .counters)
            try container.encode(row.figures, forKey: .figures)
            try container.encode(ISO8601DateFormatter().string(from: context.date), forKey: .date)
            try container.encode(context.command, forKey: .command)
            try container.encode(context.loadAverage, forKey: .loadAverage)
            try container.encode(context.crossCoreRoundTripNanoseconds, forKey: .crossCoreRoundTrip)
            try container.encode(context.queueCeiling.eagerEventsPerSecond, forKey: .queueCeilingEager)
            try container.encode(context.queueCeiling.batchedEventsPerSecond, forKey: .queueCeilingBatched)
            try container.encode(context.spscLimitEventsPerSecond, forKey: .spscLimit)
            try container.encode(context.spscLimitEventsPerSecond.map { row.eventsPerSecond.median / $0 }, forKey: .fractionOfSPSCLimit)
            try container.encode(row.samples.map(Repetition.init), forKey: .repetitionSamples)
        }
    }

    static func render(_ results: [ResultRow], context: RunContext) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(results.map { Entry(row: $0, context: context) })
    }
}
