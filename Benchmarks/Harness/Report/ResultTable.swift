/// The results as a table of strings: the same columns on stdout and in the
/// Markdown report.
struct ResultTable {
    static let header = [
        "scenario", "engine", "events", "events/s (median)", "min – max", "vs yardstick",
        "p50", "p99", "p99.9", "max", "allocs/event", "peak RSS (run's growth)",
    ]
    /// Columns whose cells are numbers, right-aligned.
    static let numeric: Set<Int> = [2, 3, 4, 5, 6, 7, 8, 9, 10, 11]

    let rows: [[String]]
    /// Scenario-specific counters, one line per row that has any.
    let notes: [String]

    init(_ results: [ResultRow]) {
        rows = results.map { row in
            let latency = row.latency
            return [
                row.scenario,
                row.engine,
                Format.count(row.events),
                Format.rate(row.eventsPerSecond.median),
                "\(Format.rate(row.eventsPerSecond.min)) – \(Format.rate(row.eventsPerSecond.max))",
                Format.ratio(row.ratioToBaseline),
                latency.map { Format.nanoseconds($0.p50.median) } ?? "",
                latency.map { Format.nanoseconds($0.p99.median) } ?? "",
                latency.map { Format.nanoseconds($0.p999.median) } ?? "",
                latency.map { Format.nanoseconds($0.max.median) } ?? "",
                Format.allocations(row.allocationsPerEvent),
                Format.bytes(row.peakRSSBytes) + (row.peakRSSGrowthBytes.map { " (+\(Format.mebibytes($0)))" } ?? ""),
            ]
        }
        let paired = results.compactMap { row -> String? in
            guard let ratio = row.pairedRatio, let yardstick = row.yardstick else { return nil }
            return "\(row.scenario) on \(row.engine) vs \(yardstick), round by round: "
                + "\(Format.ratio(ratio.median)) (\(Format.ratio(ratio.min)) – \(Format.ratio(ratio.max)))"
        }
        let pairedLatency = results.compactMap { row -> String? in
            guard let paired = row.pairedLatency, let yardstick = row.yardstick else { return nil }
            return "\(row.scenario) on \(row.engine) vs \(yardstick), latency round by round: "
                + "p50 at or below in \(paired.p50AtOrBelow) of \(paired.rounds) "
                + "(median difference \(Format.signedNanoseconds(paired.p50Difference))), "
                + "p99 in \(paired.p99AtOrBelow) of \(paired.rounds) "
                + "(\(Format.signedNanoseconds(paired.p99Difference)))"
        }
        notes = paired + pairedLatency + results.compactMap { row in
            guard !row.counters.isEmpty || !row.figures.isEmpty else { return nil }
            let counts = row.counters.map { ($0.key, Format.count($0.value)) }
            let figures = row.figures.map { ($0.key, Format.figure($0.value)) }
            let counters = (counts + figures).sorted { $0.0 < $1.0 }
                .map { "\($0.0.replacingOccurrences(of: "_", with: " ")) \($0.1)" }
                .joined(separator: ", ")
            return "\(row.scenario) on \(row.engine) (median per repetition): \(counters)"
        }
    }
}
