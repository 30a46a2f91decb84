import Histogram

/// Latency percentiles of one repetition, in nanoseconds.
struct LatencySummary: Sendable, Hashable {
    var p50: UInt64
    var p99: UInt64
    var p999: UInt64
    var max: UInt64
    /// How many latencies were recorded.
    var count: UInt64

    init(p50: UInt64, p99: UInt64, p999: UInt64, max: UInt64, count: UInt64) {
        self.p50 = p50
        self.p99 = p99
        self.p999 = p999
        self.max = max
        self.count = count
    }

    /// Reads the percentiles off an HdrHistogram (3 significant digits, so
    /// each figure is within 0.1% of the recorded value).
    init(_ histogram: Histogram<UInt64>) {
        self.init(
            p50: histogram.valueAtPercentile(50),
            p99: histogram.valueAtPercentile(99),
            p999: histogram.valueAtPercentile(99.9),
            max: histogram.max,
            count: histogram.totalCount)
    }

    /// A histogram for latencies from 1 ns to 100 s, allocated up front so
    /// that recording never allocates.
    static func makeHistogram() -> Histogram<UInt64> {
        Histogram<UInt64>(
            lowestDiscernibleValue: 1, highestTrackableValue: 100_000_000_000,
            numberOfSignificantValueDigits: .three)
    }
}
