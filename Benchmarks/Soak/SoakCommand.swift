import ArgumentParser
import CMallocCounter
import Dispatch
import Foundation
@_spi(Testing) import Spindle
import Synchronization

/// `soak`: a mixed workload for a given time, then the books.
///
/// 1,000 loops, each with an inline feedback, async effects under both
/// execution strategies, a renderer on a dispatch queue (every state or
/// conflated), a gear shared with other loops (both ways) and an observer;
/// producer threads emit numbered items to random loops at a paced rate,
/// waiting while the loops owe too much (a machine slower than the rate
/// would otherwise pile work into queues and mailboxes, and the RSS check
/// would measure the overload);
/// loops are stopped and replaced all along (start/stop churn). Checked:
/// every stopped loop's books (per-producer order, accepted = reduced, every
/// echo an effect or gear sent reduced or accounted for as discarded or
/// refused, the observer saw every reduction); nothing owed at the end
/// (every item reduced, every state of an every-state renderer rendered
/// or dropped by its loop's stop); memory after warm-up flat (see
/// `MemoryBooks`); live objects back to zero at the end.
@main
struct SoakCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract: "Run Spindle's mixed soak workload and check its books, its RSS and its live objects.",
        discussion: "Set MALLOC_ARENA_MAX (scripts/soak.sh sets 2): glibc's per-thread arenas otherwise grow with every thread that ever allocated.")

    @Option(help: "How long the workload runs, in seconds.")
    var seconds = 60
    @Option(help: "Loops running at once.")
    var loops = 1_000
    @Option(help: "Producer threads (1 to \(SoakState.maximumProducers)).")
    var producers = 4
    @Option(help: "Items per second, all producers together.")
    var rate = 200_000
    @Option(help: "Loops stopped and replaced per second.")
    var churn = 100
    @Option(help: "Seconds of warm-up before the memory reference (default: half the run, at most 120).")
    var warmUp: Int?
    @Option(help: "Largest growth of the heap in use allowed after warm-up, in percent of the reference (RSS where the allocator cannot tell).")
    var maxHeapGrowth = 5.0
    @Option(help: "Largest RSS growth allowed after warm-up where the heap in use is checked, in percent of the reference.")
    var maxRSSGrowth = 20.0

    func validate() throws {
        guard (1...SoakState.maximumProducers).contains(producers) else {
            throw ValidationError("--producers must be 1 to \(SoakState.maximumProducers)")
        }
        guard seconds >= 2, loops >= 1, rate >= producers, churn >= 0 else {
            throw ValidationError("--seconds ≥ 2, --loops ≥ 1, --rate ≥ --producers, --churn ≥ 0")
        }
    }

    func run() async throws {
        // A young process's RSS climbs for a minute or two (allocator
        // arenas and caches, the concurrency runtime's pools) before it
        // levels off; a leak keeps climbing after that.
        let warmUpSeconds = min(warmUp ?? min(120, max(1, seconds / 2)), seconds - 1)
        let arenas = ProcessInfo.processInfo.environment["MALLOC_ARENA_MAX"] ?? "unset"
        print("soak: \(seconds) s, \(loops) loops, \(producers) producers at \(rate) items/s, \(churn) loops replaced/s, "
            + "warm-up \(warmUpSeconds) s, MALLOC_ARENA_MAX=\(arenas)")
        // The loops live in `workload`'s scope: once it returns, only
        // what Spindle itself keeps could still be alive.
        let (memory, found, totals, elapsed) = try await workload(warmUpSeconds: warmUpSeconds)
        var failures = found
        let (accepted, reduced, retired) = totals
        print("soak: \(accepted) items accepted, \(reduced) reductions (items and echoes), \(retired) loops checked; "
            + "\(String(format: "%.0f", Double(accepted) / (elapsed / .seconds(1)))) items/s")
        failures += memory.check(warmUpSeconds: warmUpSeconds, maxHeapGrowth: maxHeapGrowth, maxRSSGrowth: maxRSSGrowth)

        // Effect tasks and dispatch work items end shortly after the stops.
        var live = SpindleLiveObjects.current
        let deadline = ContinuousClock.now + .seconds(30)
        while !live.isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
            live = SpindleLiveObjects.current
        }
        print("soak: live objects at the end: \(live)")
        if !live.isEmpty { failures.append("live objects left: \(live)") }

        if failures.isEmpty {
            print("soak: passed")
        } else {
            for failure in failures.prefix(20) { print("soak: FAILED: \(failure)") }
            if failures.count > 20 { print("soak: … and \(failures.count - 20) more failures") }
            throw ExitCode.failure
        }
    }

    /// Runs the workload, stops every loop and checks each one's books.
    /// - Returns: memory per second, the failures, (items accepted,
    ///   reductions, loops checked), and how long the producers ran.
    private func workload(warmUpSeconds: Int) async throws -> (MemoryBooks, [String], (Int, Int, Int), Duration) {
        let world = SoakWorld(loops: loops, producers: producers)
        let coverage = SoakCoverage()
        let threads = SoakProducers(world: world, producers: producers, rate: rate)
        threads.start()

        var memory = MemoryBooks()
        var retired = 0
        let start = ContinuousClock.now
        let steps = 10
        // Retired loops are stopped and checked concurrently (a stop waits
        // for a grace period), so the churn keeps its pace. Unstructured
        // tasks that hand their findings over as they finish: a task group
        // would keep every finished child until the end, and the soak would
        // measure its own bookkeeping.
        let retirements = SoakRetirements()
        for second in 0..<seconds {
            for step in 0..<steps {
                try await Task.sleep(until: start + .milliseconds(second * 1000 + (step + 1) * 1000 / steps))
                let replacements = churn / steps + (step < churn % steps ? 1 : 0)
                for _ in 0..<replacements {
                    retirements.launch(world.replace(slot: Int.random(in: 0..<loops)), into: coverage)
                    retired += 1
                }
            }
            memory.sample()
        }
        let elapsed = ContinuousClock.now - start
        threads.stop()
        await threads.waitUntilFinished()
        // The last loops too, all at once: a soak whose books do not
        // balance fails within one retirement's wait, not one per loop.
        for old in world.all() {
            retirements.launch(old, into: coverage)
            retired += 1
        }
        var failures = await retirements.waitForAll()

        print("soak: \(coverage.description)")
        print(String(format: "soak: producers waited %.1f s (all producers together) for the loops to catch up",
                     Double(world.backlog.waited.current) / 1e6))
        // Every item reduced, and every state of an every-state renderer's
        // loop rendered: nothing owed once every loop has stopped.
        let owed = (world.backlog.items.current, world.backlog.renders.current)
        if owed != (0, 0) { failures.append("owed after every loop stopped: \(owed.0) items, \(owed.1) renders") }
        let attached = world.gears.map(\.attachedCount).reduce(0, +)
        if attached != 0 { failures.append("\(attached) loops still attached to gears after every loop stopped") }
        return (memory, failures, (world.acceptedTotal.current, world.reducedTotal.current, retired), elapsed)
    }
}

/// The process's memory, sampled once a second, and its check.
///
/// The leak measure is the heap in use (glibc's `mallinfo2`): what the
/// process holds. The resident set is reported and bounded more loosely:
/// glibc keeps the pages of chunks freed inside an arena, so after each new
/// peak of the backlog (an overloaded machine fills queues and mailboxes
/// up to the producers' bound, then drains them) the RSS ratchets up while
/// the heap in use comes back (CONTRIBUTING.md, "The soak"). RSS still
/// catches what the heap does not count (thread stacks, maps). Where the
/// allocator cannot say (not glibc), the RSS takes the heap's bound.
struct MemoryBooks {
    var resident: [Int] = []
    /// Empty where the allocator cannot say.
    var inUse: [Int] = []
    /// The process's threads, at each sample (empty where /proc cannot
    /// say): printed, for a reader who wonders whether a growth came with
    /// new threads (see `SoakWorld.renderQueues`).
    var threads: [Int] = []

    mutating func sample() {
        resident.append(ProcessMemory.residentBytes())
        if let count = ProcessMemory.threadCount() { threads.append(count) }
        let heap = Int(bench_malloc_in_use_bytes())
        if heap >= 0 { inUse.append(heap) }
    }

    /// Prints the samples and the growths after warm-up; returns failures.
    func check(warmUpSeconds: Int, maxHeapGrowth: Double, maxRSSGrowth: Double) -> [String] {
        var failures: [String] = []
        let rssLimit = inUse.isEmpty ? maxHeapGrowth : maxRSSGrowth
        // RSS only grows back slowly: its peak after warm-up.
        let rss = Self.growth(resident, warmUpSeconds: warmUpSeconds) { after in after.max() }
        print("soak: RSS MiB per second: \(Self.mebibytes(resident))")
        print(String(format: "soak: RSS after warm-up %.1f MiB, peak after %.1f MiB: %+.2f%% (limit %.1f%%)",
                     rss.reference / Self.mib, rss.after / Self.mib, rss.percent, rssLimit))
        if rss.percent > rssLimit { failures.append(String(format: "RSS grew %.2f%% after warm-up", rss.percent)) }
        guard !inUse.isEmpty else { return failures }
        // The heap in use follows the backlog second by second: the median
        // of the last ten seconds against that of the ten before the
        // reference (a leak raises every sample; a burst, a few).
        let heap = Self.growth(inUse, warmUpSeconds: warmUpSeconds) { after in Self.median(after.suffix(10)) }
        print("soak: heap in use MiB per second: \(Self.mebibytes(inUse))")
        if !threads.isEmpty {
            print("soak: threads per second: \(threads.map(String.init).joined(separator: " "))")
        }
        print(String(format: "soak: heap in use after warm-up %.1f MiB (median of 10 s), at the end %.1f MiB: %+.2f%% (limit %.1f%%)",
                     heap.reference / Self.mib, heap.after / Self.mib, heap.percent, maxHeapGrowth))
        if heap.percent > maxHeapGrowth {
            failures.append(String(format: "heap in use grew %.2f%% after warm-up", heap.percent))
        }
        return failures
    }

    private static let mib = Double(1 << 20)

    private static func mebibytes(_ samples: [Int]) -> String {
        samples.map { String(format: "%.1f", Double($0) / mib) }.joined(separator: " ")
    }

    private static func median(_ samples: ArraySlice<Int>) -> Int? {
        samples.isEmpty ? nil : samples.sorted()[samples.count / 2]
    }

    /// The reference (the median of the ten samples up to the warm-up's
    /// end), the figure `after` makes of the samples after it, and the
    /// growth in percent.
    private static func growth(
        _ samples: [Int], warmUpSeconds: Int, after: (ArraySlice<Int>) -> Int?
    ) -> (reference: Double, after: Double, percent: Double) {
        let end = min(warmUpSeconds, samples.count)
        let reference = median(samples[max(0, end - 10)..<end]) ?? 0
        let later = after(samples[end...]) ?? reference
        let percent = reference > 0 ? Double(later - reference) / Double(reference) * 100 : 0
        return (Double(reference), Double(later), percent)
    }
}

/// The resident set size, from /proc/self/statm (0 where there is none),
/// and the thread count, from /proc/self/status.
enum ProcessMemory {
    static func threadCount() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("Threads:") {
            return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

/// The retirements under way, and what they found.
final class SoakRetirements: Sendable {
    private struct State {
        var running = 0
        var failures: [String] = []
    }
    private let state = Mutex(State())

    /// Stops and checks `old` in a task of its own (see `SoakWorld.retire`).
    func launch(_ old: SoakLoop, into coverage: SoakCoverage) {
        state.withLock { $0.running += 1 }
        Task {
            let failures = await SoakWorld.retire(old, into: coverage)
            state.withLock { state in
                state.running -= 1
                state.failures += failures
            }
        }
    }

    /// Waits until every retirement begun has ended; returns their findings.
    func waitForAll() async -> [String] {
        while state.withLock({ $0.running }) > 0 { try? await Task.sleep(for: .milliseconds(1)) }
        return state.withLock { $0.failures }
    }
}
