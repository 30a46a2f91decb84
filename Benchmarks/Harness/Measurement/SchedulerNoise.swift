import Foundation

/// What took the CPUs away from the measured work during a window: the
/// hypervisor's steal time over the whole machine (`/proc/stat`), and how
/// often the kernel preempted one of this process's threads (involuntary
/// context switches, `getrusage`). Latency tails on a small shared machine
/// follow these more than the engine; the latency scenarios report them so
/// a tail can be read against them.
struct SchedulerNoise {
    private let ticks: (steal: UInt64, total: UInt64)?
    private let preemptions: Int

    /// Starts a window.
    static func begin() -> SchedulerNoise {
        SchedulerNoise(ticks: machineTicks(), preemptions: ProcessStats.involuntaryContextSwitches())
    }

    /// Ends the window and returns the counters to report:
    /// `steal_per_mille` (steal time over all CPU time of the machine, per
    /// thousand; absent where /proc/stat is) and `preemptions` (involuntary
    /// context switches of the process's threads).
    func end() -> [String: Int] {
        var counters = ["preemptions": ProcessStats.involuntaryContextSwitches() - preemptions]
        if let before = ticks, let after = Self.machineTicks(), after.total > before.total {
            counters["steal_per_mille"] = Int((after.steal &- before.steal) * 1000 / (after.total &- before.total))
        }
        return counters
    }

    /// The aggregate `cpu` line of /proc/stat: steal ticks and all ticks.
    private static func machineTicks() -> (steal: UInt64, total: UInt64)? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = text.split(separator: "\n").first, line.hasPrefix("cpu ")
        else { return nil }
        let fields = line.split(separator: " ").dropFirst().compactMap { UInt64($0) }
        // user nice system idle iowait irq softirq steal [guest guest_nice]:
        // guest time is already counted in user and nice.
        guard fields.count >= 8 else { return nil }
        return (fields[7], fields[0..<8].reduce(0, +))
    }
}

/// The process's context switches over a window, per round trip, with the
/// machine's steal time (`SchedulerNoise`): the latency scenarios' counters.
struct ContextSwitches {
    let voluntary: Int
    let noise: SchedulerNoise

    static func begin() -> ContextSwitches {
        ContextSwitches(voluntary: ProcessStats.voluntaryContextSwitches(), noise: SchedulerNoise.begin())
    }

    /// `voluntary_switches_per_1k` and `preemptions_per_1k` (per thousand
    /// round trips), and `steal_per_mille`.
    func end(roundTrips: Int) -> [String: Int] {
        let voluntarySwitches = ProcessStats.voluntaryContextSwitches() - voluntary
        var counters = noise.end()
        let preemptions = counters.removeValue(forKey: "preemptions") ?? 0
        counters["voluntary_switches_per_1k"] = voluntarySwitches * 1_000 / max(roundTrips, 1)
        counters["preemptions_per_1k"] = preemptions * 1_000 / max(roundTrips, 1)
        return counters
    }
}
