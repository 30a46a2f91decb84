import Dispatch
import Foundation
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import SpindleQueueFixture
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif
import SpindleTestSupport

// Shared machinery of the stress suite: scale knobs read from the
// environment, OS-thread producers, TSan-visible payload slots, the reducer-side
// order checker, live-object baselines and process probes (/proc).
//
// Every stress test checks three things (STYLE.md): conservation, per-producer
// FIFO and live objects back to their baseline.

/// The root of the stress suite. `.serialized` applies to every nested suite:
/// stress tests measure process-wide counters (live objects, threads, RSS) and
/// would disturb each other's figures if they ran side by side.
@Suite("Spindle stress", .serialized)
enum StressSuite {}

// MARK: - Scale

/// The suite's size knobs. Defaults are the CI amounts; set the variables
/// for a quick local run, e.g. `SPINDLE_STRESS_EVENTS=200000 SPINDLE_STRESS_CYCLES=500`.
enum StressScale {
    /// Events per queue kind for the throughput test, split evenly over the
    /// 1, 2, 4 and 8 producer runs (`SPINDLE_STRESS_EVENTS`, default 10 M).
    static let eventsPerQueue = integer("SPINDLE_STRESS_EVENTS", default: 10_000_000)
    /// Start/stop cycles (`SPINDLE_STRESS_CYCLES`, default 10,000).
    static let cycles = integer("SPINDLE_STRESS_CYCLES", default: 10_000)
    /// Rounds of the race-shaped tests: stop races, fan-out churn, faults
    /// (`SPINDLE_STRESS_ROUNDS`, default 20).
    static let rounds = integer("SPINDLE_STRESS_ROUNDS", default: 20)
    /// Soak length in seconds (`SPINDLE_SOAK_SECONDS`, default 60), when
    /// `SPINDLE_SOAK=1`.
    static let soakSeconds = integer("SPINDLE_SOAK_SECONDS", default: 60)

    /// Loops of the many-loops test: a tenth of the start/stop cycles,
    /// 40 to 1,000 (1,000 at the CI amount).
    static var manyLoops: Int { min(1_000, max(40, cycles / 10)) }
    /// Loops of the idle-wake test: as many as the cycles, at least 100
    /// (10,000 at the CI amount).
    static var idleLoops: Int { max(100, cycles) }

    static let soakEnabled = ProcessInfo.processInfo.environment["SPINDLE_SOAK"] == "1"
    static let canaryEnabled = ProcessInfo.processInfo.environment["SPINDLE_TSAN_CANARY"] == "1"

    private static func integer(_ name: String, default value: Int) -> Int {
        guard let text = ProcessInfo.processInfo.environment[name] else { return value }
        guard let parsed = Int(text.replacingOccurrences(of: "_", with: "")), parsed > 0 else {
            preconditionFailure("\(name) must be a positive integer, got \(text)")
        }
        return parsed
    }
}

/// One line per test for scripts/stress.sh to add up:
/// `SPINDLE-STRESS <kind> queue=<name> <count> [<rate>/s]`.
func reportTotal(_ kind: String, queue: String, _ count: Int, over duration: Duration? = nil) {
    var line = "SPINDLE-STRESS \(kind) queue=\(queue) \(count)"
    if let duration {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        if seconds > 0 { line += " \(Int(Double(count) / seconds))/s" }
    }
    stressLine(line)
}

/// Prints one `SPINDLE-STRESS` line and flushes it at once: if a later test
/// hangs and CI kills the run, the lines so far are not lost in the buffer
/// of a pipe.
func stressLine(_ line: String) {
    print(line)
    fflush(nil)  // every output stream: `stdout` itself is a C global Swift 6 will not read
}

/// A short name for a queue kind, for totals and test arguments.
func name(of queue: QueueKind) -> String {
    switch queue {
    case .lockFree: return "lockFree"
    case .custom(let factory): return factory.name
    case .bounded(let capacity, .block): return "ring(\(capacity),block)"
    case .bounded(let capacity, .dropNewest): return "ring(\(capacity),dropNewest)"
    }
}

/// The three queues every throughput-shaped test runs on.
let stressQueues: [QueueKind] = [.lockFree, .bounded(capacity: 1024, overflow: .block), .locked]

// MARK: - Executors

/// The executors of one stress test's loops, all of one kind: the shared
/// pool; a two-thread pool made for the test (`finish()` shuts it down); a
/// dedicated thread per loop; serial queues (or `SerialExecutor`s over
/// them) made for the test, which the loops share round-robin; the main actor.
final class StressExecutors: Sendable {
    let kind: ExecutorKind
    let pool: ReducerPool?
    private let queues: [DispatchQueue]
    private let serialExecutors: [QueueSerialExecutor]
    /// `.enqueuing`: each queue's context check (a dispatch-specific key
    /// per queue: a loop runs in place only on its own queue).
    private let contextKeys: [DispatchSpecificKey<Bool>]

    init(_ kind: ExecutorKind, name: String = "stress-pool", queues: Int = 4) throws {
        self.kind = kind
        pool = kind == .privatePool ? try ReducerPool(threads: 2, name: name) : nil
        self.queues = kind == .serialQueue || kind == .enqueuing
            ? (0..<queues).map { DispatchQueue(label: "stress-serial-\($0)") } : []
        contextKeys = kind == .enqueuing ? self.queues.map { queue in
            let key = DispatchSpecificKey<Bool>()
            queue.setSpecific(key: key, value: true)
            return key
        } : []
        serialExecutors = kind == .serialExecutor
            ? (0..<queues).map { QueueSerialExecutor(DispatchQueue(label: "stress-serial-executor-\($0)")) } : []
    }

    /// The executor of the loop numbered `index`.
    func executor(for index: Int) -> SpinExecutor {
        switch kind {
        case .sharedPool: .sharedPool
        case .privatePool: .pool(pool!)
        case .dedicatedThread: .dedicatedThread
        case .serialQueue: .queue(queues[index % queues.count])
        case .serialExecutor: .serialExecutor(serialExecutors[index % serialExecutors.count])
        case .mainActor: .mainActor
        case .enqueuing: enqueuing(queues[index % queues.count], contextKeys[index % queues.count])
        }
    }

    /// The serial queue of the loop numbered `index` (`.serialQueue` and
    /// `.enqueuing`): code submitted to it runs on that loop's context.
    func queue(for index: Int) -> DispatchQueue {
        queues[index % queues.count]
    }

    /// SpindleNIO's shape over `queue` (see `ExecutorKind.enqueuing`).
    private func enqueuing(_ queue: DispatchQueue, _ key: DispatchSpecificKey<Bool>) -> SpinExecutor {
        .enqueuing(name: queue.label, isCurrent: { DispatchQueue.getSpecific(key: key) == true }) {
            queue.async(execute: $0)
        }
    }

    /// Shuts the test's pool down (its remaining loops stop with drain) and
    /// returns once its threads are gone; nothing to do for the other kinds.
    func finish() async throws {
        try await pool?.shutdown()
    }
}


// MARK: - Flags

/// A one-way flag any thread may raise.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    init() {}
    func raise() { value.store(true, ordering: .sequentiallyConsistent) }
    var isRaised: Bool { value.load(ordering: .sequentiallyConsistent) }
}

// MARK: - Payloads Thread Sanitizer can see

/// One plain (non-atomic) `Int` per event, written by the producer before it
/// emits and read by the reducer after it dequeues. The event carries only
/// the index. Stores through a pointer subscript are compiled into this
/// module, so TSan instruments them (unlike the stdlib's uninstrumented
/// `initialize(to:)`/`move()` that carry the event itself at -Onone): if a
/// queue lacked its happens-before edge, TSan would report the slot.
final class PayloadSlots: @unchecked Sendable {
    // @unchecked: slot `i` is written once by its producer before the emit
    // and read only after the queue handed the event over; that edge is
    // exactly what the suite asks TSan to verify.
    let producers: Int
    let perProducer: Int
    private let base: UnsafeMutablePointer<Int>

    init(producers: Int, perProducer: Int) {
        self.producers = producers
        self.perProducer = perProducer
        base = .allocate(capacity: Swift.max(1, producers * perProducer))
    }

    deinit { base.deallocate() }

    /// The value expected in a slot: a mix of producer and sequence.
    static func expected(producer: Int, sequence: Int) -> Int {
        (sequence &* 0x9E37_79B9) ^ (producer &<< 48) ^ 0x5A5A
    }

    /// Producer side, before emitting `sequence`.
    func write(producer: Int, sequence: Int) {
        base[producer * perProducer + sequence] = Self.expected(producer: producer, sequence: sequence)
    }

    /// Consumer side: whether the slot holds what its producer wrote.
    func holdsExpected(producer: Int, sequence: Int) -> Bool {
        base[producer * perProducer + sequence] == Self.expected(producer: producer, sequence: sequence)
    }
}

/// An event from producer `producer`, its `sequence`-th (0-based).
struct Stamped: Sendable {
    let producer: Int
    let sequence: Int
}

/// Checks, on the reducer thread, every event a loop reduces: per-producer
/// FIFO (strictly increasing; with `contiguous`, no gaps either), payload
/// slots, and per-producer counts and checksums. It is a plain class with
/// plain fields on purpose: only the reducer thread touches it while the loop
/// runs, so any second thread in the reducer is a TSan report.
final class OrderChecker: @unchecked Sendable {
    // @unchecked: reducer thread only while the loop runs; read by the test
    // after `stop()` (or after the loop's drain was observed), which orders
    // the reads after the last reduction.
    let producers: Int
    let contiguous: Bool
    let payloads: PayloadSlots?
    private(set) var lastSequence: [Int]
    private(set) var reducedPerProducer: [Int]
    private(set) var sequenceSum: [Int]
    private(set) var outOfOrder = 0
    private(set) var gaps = 0
    private(set) var badPayloads = 0
    private(set) var reduced = 0
    /// Reductions so far, for other threads to watch the backlog.
    let progress = Counter()

    init(producers: Int, contiguous: Bool = true, payloads: PayloadSlots? = nil) {
        self.producers = producers
        self.contiguous = contiguous
        self.payloads = payloads
        lastSequence = Array(repeating: -1, count: producers)
        reducedPerProducer = Array(repeating: 0, count: producers)
        sequenceSum = Array(repeating: 0, count: producers)
    }

    func observe(_ event: Stamped) {
        let last = lastSequence[event.producer]
        if event.sequence <= last { outOfOrder += 1 }
        if contiguous, event.sequence != last + 1 { gaps += 1 }
        lastSequence[event.producer] = event.sequence
        reducedPerProducer[event.producer] += 1
        sequenceSum[event.producer] &+= event.sequence
        if let payloads, !payloads.holdsExpected(producer: event.producer, sequence: event.sequence) {
            badPayloads += 1
        }
        reduced += 1
        progress.add()
    }

    /// A reducer counting events (its state) that checks each one here.
    var reducer: Reducer<Int, Stamped> {
        Reducer { [self] count, event in
            observe(event)
            return count + 1
        }
    }
}

/// What one producer thread did.
struct ProducerTally: Sendable {
    let producer: Int
    var accepted = 0
    var dropped = 0
    var stopped = 0
    /// Sum of the accepted sequence numbers (compared with the reducer's).
    var acceptedSequenceSum = 0
    /// `.accepted` or `.dropped` after a `.stopped`: never allowed.
    var answeredAfterStopped = 0

    init(producer: Int) { self.producer = producer }

    mutating func count(_ result: EmitResult, sequence: Int) {
        switch result {
        case .accepted:
            if stopped > 0 { answeredAfterStopped += 1 }
            accepted += 1
            acceptedSequenceSum &+= sequence
        case .dropped:
            if stopped > 0 { answeredAfterStopped += 1 }
            dropped += 1
        case .stopped:
            stopped += 1
        }
    }
}

extension ProducerTally {
    /// A producer's emits of `.item`-like events (sequence 0, 1, …) until
    /// one is not accepted; the tally of all of them.
    static func emittingUntilRefused(producer: Int, _ emit: (Stamped) -> EmitResult) -> ProducerTally {
        var tally = ProducerTally(producer: producer)
        var sequence = 0
        while true {
            let result = emit(Stamped(producer: producer, sequence: sequence))
            tally.count(result, sequence: sequence)
            if result != .accepted { return tally }
            sequence += 1
        }
    }
}

// MARK: - Live objects

/// The live-object counts at a test's start, and the check that they came
/// back. Other suites of the same process (plain `swift test` runs them in
/// parallel) may run loops too, so the baseline is taken once the counts have
/// held still for a moment, and the check waits, with a deadline, for every
/// count to be at or below it.
struct LiveBaseline {
    let counts: SpindleLiveObjects
    let threads: Int

    /// Waits (at most `seconds`) until the counts hold still for 300 ms.
    static func settle(within seconds: Double = 120) async -> LiveBaseline {
        let deadline = ContinuousClock.now + .seconds(seconds)
        var last = SpindleLiveObjects.current
        var stableSince = ContinuousClock.now
        while ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
            let now = SpindleLiveObjects.current
            if now != last {
                last = now
                stableSince = ContinuousClock.now
            } else if ContinuousClock.now - stableSince >= .milliseconds(300) {
                break
            }
        }
        return LiveBaseline(counts: last, threads: ProcessProbe.threadCount())
    }

    /// Whether every count is at or below the baseline now.
    func isReached(_ now: SpindleLiveObjects = .current) -> Bool {
        now.loops <= counts.loops && now.reducerThreads <= counts.reducerThreads
            && now.feedbackWorkers <= counts.feedbackWorkers && now.effectTasks <= counts.effectTasks
            && now.eventQueues <= counts.eventQueues && now.effectRouters <= counts.effectRouters
            && now.stateSubscriptions <= counts.stateSubscriptions
    }

    /// Records an issue unless the live async effect runs fall back to the
    /// baseline within `seconds` (every run's body has returned, so every
    /// event it made has been emitted).
    func expectEffectTasksEnded(within seconds: Double = 120, sourceLocation: SourceLocation = #_sourceLocation) async {
        let ended = await eventually(within: seconds) { SpindleLiveObjects.current.effectTasks <= counts.effectTasks }
        #expect(ended, "effect tasks still running: \(SpindleLiveObjects.current)", sourceLocation: sourceLocation)
    }

    /// Records an issue unless every count returns to the baseline within
    /// `seconds`.
    func expectReturned(within seconds: Double = 60, sourceLocation: SourceLocation = #_sourceLocation) async {
        let back = await eventually(within: seconds) { isReached() }
        #expect(back, "live objects did not return to \(counts): now \(SpindleLiveObjects.current)",
                sourceLocation: sourceLocation)
    }
}

// MARK: - Process probes

enum ProcessProbe {
    /// Threads of this process (entries of /proc/self/task).
    static func threadCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
    }

    /// Resident set size in bytes (second field of /proc/self/statm, in pages).
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return -1 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return -1 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

/// Runs `round` until `wanted` rounds have raced (returned non-nil), or
/// `wanted × 20` attempts were made; returns the sum of what the raced
/// rounds returned, and how many raced. A round whose race did not happen
/// (its premise failed: on a loaded machine the stop can come after every
/// producer finished) proves nothing either way, so it is run again, never
/// failed; its other checks (conservation, order) still ran.
func raceRounds(
    _ wanted: Int, _ round: (_ index: Int) async throws -> Int?
) async rethrows -> (total: Int, raced: Int) {
    var total = 0
    var raced = 0
    var attempt = 0
    while raced < wanted, attempt < wanted * 20 {
        if let checked = try await round(attempt) {
            total += checked
            raced += 1
        }
        attempt += 1
    }
    return (total, raced)
}

/// Producers hold at a point of their run until the stop is on its way,
/// so the stop meets them mid-stream even when it is scheduled late.
final class StopComing: Sendable {
    private let raised = Counter()

    /// Called by the stopping task right before it stops the loop.
    func announce() { raised.add() }

    /// Waits (a producer thread) until ``announce()`` was called.
    func wait() {
        while raised.current == 0 { usleep(50) }
    }
}
