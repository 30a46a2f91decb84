import Foundation

/// What every report says about the run itself: when, how, on what.
struct RunContext: Sendable {
    let date: Date
    /// The command line that produced the results.
    let command: String
    let repetitions: Int
    let quick: Bool
    let cpuModel: String
    let cores: Int
    let allocationsCounted: Bool
    /// The 1-minute load average when the run started (nil: unknown): other
    /// work on the machine skews every figure, so the reports say it.
    let loadAverage: Double?
    /// Two threads bouncing one value between two cache lines: the floor of
    /// any thread-to-thread round trip here (see CrossCoreProbe).
    let crossCoreRoundTripNanoseconds: Double
    /// The C wait-free queue alone, one producer to one consumer (see
    /// QueueCeilingProbe): the ceiling of `reduce-1p` on `lockfree`.
    let queueCeiling: QueueCeilingProbe.Result
    /// A plain C SPSC ring between two threads (see SPSCLimitProbe): the
    /// machine's limit for one producer feeding one consumer; nil when the
    /// probe could not run.
    let spscLimitEventsPerSecond: Double?

    init(command: String, repetitions: Int, quick: Bool) {
        date = Date()
        self.command = command
        self.repetitions = repetitions
        self.quick = quick
        cpuModel = Self.readCPUModel() ?? "unknown CPU"
        cores = ProcessInfo.processInfo.activeProcessorCount
        allocationsCounted = AllocationCounter.isSupported
        loadAverage = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))
            .flatMap { $0.split(separator: " ").first }.flatMap { Double($0) }
        crossCoreRoundTripNanoseconds = CrossCoreProbe.roundTripNanoseconds()
        queueCeiling = QueueCeilingProbe.measure()
        spscLimitEventsPerSecond = SPSCLimitProbe.eventsPerSecond()
    }

    /// "2026-11-21 14:03 UTC"
    var dateText: String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm 'UTC'"
        return formatter.string(from: date)
    }

    /// "2 cores, Intel(R) Xeon(R) Processor, load 0.42"
    var machine: String {
        "\(cores) cores, \(cpuModel)" + (loadAverage.map { String(format: ", load %.2f at start", $0) } ?? "")
            + String(format: ", cross-core round trip %.0f ns", crossCoreRoundTripNanoseconds)
    }

    /// "the C queue alone: 11.2 M/s eager, 14.1 M/s batched"
    var ceilings: String {
        String(format: "the lockfree engine's C queue alone, 1 producer → 1 consumer: %.1f M/s eager, %.1f M/s batched",
               queueCeiling.eagerEventsPerSecond / 1e6, queueCeiling.batchedEventsPerSecond / 1e6)
            + (spscLimitEventsPerSecond.map { String(format: "; SPSC-ring limit: %.0f M/s", $0 / 1e6) }
                ?? "; SPSC-ring limit: n/a")
    }

    var title: String { "Spindle benchmarks — \(dateText)" }

    var subtitle: String {
        "\(command)\n\(machine); \(ceilings); median of \(repetitions) repetition\(repetitions == 1 ? "" : "s")"
            + (quick ? " (--quick: smoke sizes, not for comparison)" : "")
    }

    var methodNote: String {
        """
        events/s: median (min – max) over the repetitions; vs yardstick: median events/s \
        over the scenario's yardstick engine's in this run (baseline for the queue scenarios, dispatch for many-loops); \
        "round by round": the median (min – max) over the rounds of the ratio of the two engines' runs in one round, \
        which are back to back. Latencies: medians of the per-repetition \
        percentiles; "latency round by round": in how many rounds an engine's p50 (p99) \
        was at or below the yardstick's, and the median over the rounds of the difference. allocs/event: allocator calls in the measured region / events\
        \(allocationsCounted ? "" : " (n/a: counting needs glibc)"). peak RSS: the \
        process's VmHWM during a repetition (largest over repetitions), after a \
        malloc_trim and a clear_refs reset; in parentheses, its growth over the RSS \
        when the repetition began. cross-core round trip: two threads bouncing a value \
        between two cache lines, the floor of any thread-to-thread round trip (median of \
        5 × 20,000); feedback-loop and latency-closed cannot beat 1 / that figure.
        """
    }

    private static func readCPUModel() -> String? {
        guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return nil }
        for line in info.split(separator: "\n") where line.hasPrefix("model name") {
            if let colon = line.firstIndex(of: ":") {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }
}
