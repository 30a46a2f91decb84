import Foundation
import Synchronization

/// Thread count and CPU time of the whole process (Linux), for the
/// many-loop scenarios.
enum ProcessStats {
    /// Threads in the process now (`Threads:` of /proc/self/status).
    static func threads() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("Threads:") {
            return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// User + system CPU time of every thread of the process, in nanoseconds.
    static func cpuNanoseconds() -> UInt64 {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        func nanoseconds(_ time: timeval) -> UInt64 {
            UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_usec) * 1_000
        }
        return nanoseconds(usage.ru_utime) + nanoseconds(usage.ru_stime)
    }

    /// CPU the process burns over `seconds` of wall time while the caller
    /// sleeps (its loops idle), in microseconds per second.
    static func idleCPUMicrosecondsPerSecond(over seconds: Double = 1) async -> Int {
        let before = cpuNanoseconds()
        try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        return Int(Double(cpuNanoseconds() &- before) / 1000 / seconds)
    }
}

/// Samples the process's thread count every millisecond on a thread of its
/// own until stopped, and keeps the peak.
final class ThreadCountSampler: Sendable {
    private let peak = Atomic<Int>(0)
    private let running = Atomic<Bool>(true)
    private let stopped = Countdown(1)

    init() {
        let thread = Thread { [self] in
            while running.load(ordering: .relaxed) {
                if let now = ProcessStats.threads(), now > peak.load(ordering: .relaxed) {
                    peak.store(now, ordering: .relaxed)
                }
                usleep(1000)
            }
            stopped.arrive()
        }
        thread.start()
    }

    /// Stops sampling and returns the peak thread count seen (the sampler's
    /// own thread excluded).
    func stop(in run: ScenarioRun) async throws -> Int {
        running.store(false, ordering: .relaxed)
        try await stopped.wait(timeout: .seconds(10), "the thread sampler to stop", in: run)
        return peak.load(ordering: .relaxed) - 1
    }
}
