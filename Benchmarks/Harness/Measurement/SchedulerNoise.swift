import Foundation

/// What took the CPUs away from the measured work during a window: the
/// hypervisor's steal time over the whole machine (`/proc/stat`), and how
/// often the kernel preempted one of this process's threads (involuntary
/// context switches, `getrusage`). Latency tails on a small shared machine
/// follow these more than the engine; the latency scenarios report them so
/// a tail can be read against them.
struct SchedulerNoise {
    private let steal: UInt64?
    private let total: UInt64?
    private let preemptions: Int

    /// Starts a window.
    static func begin() -> SchedulerNoise {
        let (steal, total) = Self.machineTicks()
        return SchedulerNoise(steal: steal, total: total, preemptions: Self.involuntarySwitches())
    }

    /// Ends the window and returns the counters to report:
    /// `steal_per_mille` (steal time over all CPU time of the machine, per
    /// thousand; absent where /proc/stat is) and `preemptions` (involuntary
    /// context switches of the process's threads).
    func end() -> [String: Int] {
        var counters = ["preemptions": Self.involuntarySwitches() - preemptions]
        let (steal, total) = Self.machineTicks()
        if let s0 = self.steal, let t0 = self.total, let s1 = steal, let t1 = total, t1 > t0 {
            counters["steal_per_mille"] = Int((s1 &- s0) * 1000 / (t1 &- t0))
        }
        return counters
    }

    /// The aggregate `cpu` line of /proc/stat: steal ticks and all ticks.
    private static func machineTicks() -> (steal: UInt64?, total: UInt64?) {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = text.split(separator: "\n").first, line.hasPrefix("cpu ")
        else { return (nil, nil) }
        let fields = line.split(separator: " ").dropFirst().compactMap { UInt64($0) }
        // user nice system idle iowait irq softirq steal [guest guest_nice]:
        // guest time is already counted in user and nice.
        guard fields.count >= 8 else { return (nil, nil) }
        return (fields[7], fields[0..<8].reduce(0, +))
    }

    private static func involuntarySwitches() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return usage.ru_nivcsw
    }
}
