import CSpindle
import Foundation
import Synchronization
import Testing
import SpindleTestSupport

/// Parent of every suite in this target. Serialized (the trait is recursive)
/// because the stress and timing tests each start several busy OS threads:
/// run side by side on a 2-core machine they would starve each other, turning
/// the parker's timing bounds into noise. Off the cooperative pool (also
/// recursive): these tests spin as consumers and wait on semaphores for
/// their threads, for seconds (minutes under TSan), and on a thread of
/// Swift's cooperative pool (two on two cores) that would starve every
/// async test running beside them in `swift test`.
@Suite(.serialized, .offCooperativePool)
enum CSpindleTarget {}

/// Runs each test of a suite on a thread of its own rather than on Swift's
/// cooperative pool: the test's task prefers a task executor backed by a
/// serial dispatch queue (a thread outside the pool), so a test body that
/// blocks its thread blocks no other test's tasks. The test stays in its
/// task, so `#expect` and the test's task-locals work as usual.
struct OffCooperativePool: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // Suites get the trait too; only a test case's run needs the thread.
        guard testCase != nil else { return try await function() }
        let executor = DedicatedQueueExecutor(label: "cspindle-test.\(test.name)")
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

extension Trait where Self == OffCooperativePool {
    /// See ``OffCooperativePool``.
    static var offCooperativePool: Self { OffCooperativePool() }
}

/// A task executor whose jobs run on one serial dispatch queue (whose
/// thread comes from dispatch's pool, not Swift's cooperative one).
final class DedicatedQueueExecutor: TaskExecutor {
    private let queue: DispatchQueue
    private static let labelKey = DispatchSpecificKey<String>()

    init(label: String) {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: Self.labelKey, value: label)
    }

    /// The label of the executor whose queue runs the caller; nil elsewhere.
    static var current: String? { DispatchQueue.getSpecific(key: labelKey) }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// A C object's opaque pointer, shared with test threads.
/// Why @unchecked: `OpaquePointer` is not Sendable. Each test calls the C
/// object only in the pairs its header's concurrency table allows (any
/// number of producers, one consumer), which is the property under test.
struct SharedHandle: @unchecked Sendable {
    let raw: OpaquePointer
}

/// A payload array shared with test threads.
/// Why @unchecked: a raw pointer is not Sendable; ownership of each slot is
/// handed between producer and consumer by the queue under test (a release
/// on one side, an acquire on the other), exactly as in the engine.
struct SharedSlots: @unchecked Sendable {
    let base: UnsafeMutablePointer<Int>

    init(count: Int) {
        base = .allocate(capacity: count)
        base.initialize(repeating: -1, count: count)
    }

    func deallocate() { base.deallocate() }
}

/// A fixed set of OS threads started at once; `join` waits for all of them.
/// Why real threads: a consumer and four producers must all run at the same
/// time (and block or spin) even on 2 cores, which neither tasks nor
/// `concurrentPerform` (width = core count) guarantee.
final class TestThreads: Sendable {
    private let finished = DispatchSemaphore(value: 0)
    private let count: Int

    init(_ count: Int, name: String, body: @escaping @Sendable (Int) -> Void) {
        self.count = count
        let finished = finished
        for index in 0..<count {
            let thread = Thread {
                body(index)
                finished.signal()
            }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    /// Waits for every thread, up to `timeoutSeconds`. False when some thread
    /// is still running: the caller must then leak the C object rather than
    /// destroy it under that thread. The default is the hang guard, not a
    /// margin on how long the work takes, which Thread Sanitizer and a
    /// loaded machine stretch without bound. A shorter limit is only for
    /// threads already told to stop.
    func join(timeoutSeconds: Int = Int(hangGuardSeconds)) -> Bool {
        let deadline = DispatchTime.now() + .seconds(timeoutSeconds)
        for _ in 0..<count where finished.wait(timeout: deadline) == .timedOut {
            return false
        }
        return true
    }
}

/// Shared state of a producers/consumer stress run.
final class StressProgress: Sendable {
    /// Producers that reached the start line (a barrier, for contention).
    let ready = Atomic<Int>(0)
    /// Producers that enqueued / published all their events (release).
    let finishedProducers = Atomic<Int>(0)
    /// Set by the consumer when it gives up, so producers stop too.
    let abort = Atomic<Bool>(false)
    /// Calls that failed (acquire returning NULL, claim returning 0, ...).
    let failures = Atomic<Int>(0)

    /// Waits until `parties` producers have arrived (or the run is aborted).
    func arriveAndWaitForStart(parties: Int) {
        ready.add(1, ordering: .acquiringAndReleasing)
        while ready.load(ordering: .acquiring) < parties, !abort.load(ordering: .relaxed) {
            spindle_cpu_relax()
            sched_yield()
        }
    }
}

/// A consumer's idle wait for producers: spin, yielding only now and then.
/// Why not yield every time: on a busy 2-core machine each yield gives away
/// a whole time slice, and a small ring empties thousands of times per run
/// (a 64-slot ring stress went from 0.5 s to 20 s next to two CPU hogs).
struct ConsumerIdle {
    private var polls = 0

    mutating func pause() {
        polls &+= 1
        if polls & 1023 == 0 { sched_yield() } else { spindle_cpu_relax() }
    }
}

/// Checks a merged stream of events from several producers, each encoded as
/// `producer << 32 | sequence`: conservation (every event exactly once) and
/// per-producer FIFO (each producer's sequence numbers strictly increase).
struct ProducerStreamCheck {
    let producers: Int
    let perProducer: Int
    private(set) var received = 0
    private(set) var countPerProducer: [Int]
    private(set) var orderViolations = 0
    private(set) var malformed = 0
    private var lastSequence: [Int]

    init(producers: Int, perProducer: Int) {
        self.producers = producers
        self.perProducer = perProducer
        countPerProducer = Array(repeating: 0, count: producers)
        lastSequence = Array(repeating: -1, count: producers)
    }

    static func encode(producer: Int, sequence: Int) -> Int { producer << 32 | sequence }

    mutating func record(_ value: Int) {
        received += 1
        let producer = value >> 32
        let sequence = value & 0xFFFF_FFFF
        guard producer >= 0, producer < producers, sequence < perProducer else {
            malformed += 1
            return
        }
        if sequence <= lastSequence[producer] { orderViolations += 1 }
        lastSequence[producer] = sequence
        countPerProducer[producer] += 1
    }

    /// Strictly increasing sequences in [0, perProducer) with perProducer of
    /// them per producer means each (producer, sequence) arrived exactly once.
    func expectEveryEventExactlyOnceInProducerOrder(sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(received == producers * perProducer, "conservation", sourceLocation: sourceLocation)
        #expect(malformed == 0, "events that were never enqueued", sourceLocation: sourceLocation)
        #expect(orderViolations == 0, "per-producer FIFO", sourceLocation: sourceLocation)
        #expect(countPerProducer == Array(repeating: perProducer, count: producers),
                "events per producer", sourceLocation: sourceLocation)
    }
}

