import Foundation
import Synchronization

/// Thread count and CPU time of the whole process (Linux), for the
/// many-loop scenarios.
enum ProcessStats {
    /// Threads in the process now (field 20, `num_threads`, of
    /// /proc/self/stat). Read into a stack buffer and parsed by hand: the
    /// sampler calls this every millisecond beside the measured work, where
    /// a `String` read and split of /proc/self/status would take a real
    /// share of a core from it.
    static func threads() -> Int? {
        let fd = open("/proc/self/stat", O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1024) { buffer -> Int? in
            let count = read(fd, buffer.baseAddress, buffer.count)
            guard count > 0 else { return nil }
            let bytes = UnsafeBufferPointer(rebasing: buffer[..<count])
            // The command name (field 2) is in parentheses and may hold
            // spaces: fields are counted after its last ')'.
            guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
            var field = 2
            var value = 0
            var index = close + 1
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: " ") {
                    if field == 20 { return value }
                    field += 1
                    value = 0
                } else if field == 20, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                    value = value * 10 + Int(byte - UInt8(ascii: "0"))
                }
                index += 1
            }
            return nil
        }
    }

    /// The process's resource usage, every thread included.
    private static func usage() -> rusage {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return usage
    }

    /// Times the kernel switched one of the process's threads out while it
    /// could still run (involuntary context switches: preemptions).
    static func involuntaryContextSwitches() -> Int {
        usage().ru_nivcsw
    }

    /// Times one of the process's threads gave up its CPU to wait (a sleep,
    /// a futex, a read: voluntary context switches).
    static func voluntaryContextSwitches() -> Int {
        usage().ru_nvcsw
    }

    /// User + system CPU time of every thread of the process, in nanoseconds.
    static func cpuNanoseconds() -> UInt64 {
        let usage = usage()
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
