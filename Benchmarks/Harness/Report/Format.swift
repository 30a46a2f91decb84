import Foundation

/// Human-readable figures, shared by the console table, the Markdown table
/// and the chart.
enum Format {
    /// Events per second: "23.45 M/s", "812.3 k/s", "950 /s".
    static func rate(_ perSecond: Double) -> String {
        if perSecond >= 1e6 { return String(format: "%.2f M/s", perSecond / 1e6) }
        if perSecond >= 1e3 { return String(format: "%.1f k/s", perSecond / 1e3) }
        return String(format: "%.0f /s", perSecond)
    }

    /// A rate without its unit suffix, for axis labels: "10M", "100k", "1".
    static func axisRate(_ perSecond: Double) -> String {
        if perSecond >= 1e9 { return String(format: "%gG", perSecond / 1e9) }
        if perSecond >= 1e6 { return String(format: "%gM", perSecond / 1e6) }
        if perSecond >= 1e3 { return String(format: "%gk", perSecond / 1e3) }
        return String(format: "%g", perSecond)
    }

    /// A duration in nanoseconds: "850 ns", "12.3 µs", "1.20 ms", "2.00 s".
    static func nanoseconds(_ value: UInt64) -> String {
        let nanos = Double(value)
        if value < 1_000 { return "\(value) ns" }
        if value < 1_000_000 { return String(format: "%.1f µs", nanos / 1e3) }
        if value < 1_000_000_000 { return String(format: "%.2f ms", nanos / 1e6) }
        return String(format: "%.2f s", nanos / 1e9)
    }

    /// A difference of latencies with its sign: "+0.5 µs", "−210 ns", "0 ns".
    static func signedNanoseconds(_ value: Double) -> String {
        let magnitude = nanoseconds(UInt64(abs(value).rounded()))
        if value.rounded() == 0 { return magnitude }
        return (value < 0 ? "−" : "+") + magnitude
    }

    /// The ratio to baseline: "3.41×".
    static func ratio(_ value: Double?) -> String {
        value.map { String(format: "%.2f×", $0) } ?? "—"
    }

    /// Allocations per event: "0", "0.000013", "0.0021", "2.004".
    static func allocations(_ value: Double?) -> String {
        guard let value else { return "n/a" }
        if value == 0 { return "0" }
        if value < 0.001 { return String(format: "%.6f", value) }
        if value < 0.01 { return String(format: "%.4f", value) }
        return String(format: "%.3f", value)
    }

    /// Bytes as MiB: "41.2 MiB".
    static func bytes(_ value: Int?) -> String {
        value.map { String(format: "%.1f MiB", Double($0) / 1_048_576) } ?? "n/a"
    }

    /// Bytes as a bare MiB figure: "3.2".
    static func mebibytes(_ value: Int) -> String {
        String(format: "%.1f", Double(value) / 1_048_576)
    }

    /// A figure that is not a count: "1,204", "733.4", "18.52", "0.9731".
    static func figure(_ value: Double) -> String {
        if value == value.rounded(), value >= 0, value < 1e15 { return count(Int(value)) }
        if abs(value) >= 100 { return String(format: "%.1f", value) }
        if abs(value) >= 1 { return String(format: "%.2f", value) }
        return String(format: "%.4f", value)
    }

    /// An event count: "2,000,000".
    static func count(_ value: Int) -> String {
        let digits = String(value)
        var result = ""
        for (index, character) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { result += "," }
            result.append(character)
        }
        return result
    }
}
