import Dispatch
import Foundation
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Synchronization
import SpindleTestSupport
import SpindleQueueFixture

/// Gates that async effects wait on until the test opens them. Waiting
/// ignores task cancellation on purpose: it models an effect that does not
/// cooperate, so discarding its late events is the runtime's job.
final class Gates: Sendable {
    private struct Storage {
        var opened: Set<Int> = []
        var waiting: [Int: [CheckedContinuation<Void, Never>]] = [:]
    }
    private let storage = Locked(Storage())

    func wait(_ id: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = storage.withLock { storage -> Bool in
                if storage.opened.contains(id) { return true }
                storage.waiting[id, default: []].append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func open(_ id: Int) {
        let waiters = storage.withLock { storage -> [CheckedContinuation<Void, Never>] in
            storage.opened.insert(id)
            return storage.waiting.removeValue(forKey: id) ?? []
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// A semaphore the reducer can block on (tests only: a real reducer is pure).
final class Latch: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let entered = Atomic<Bool>(false)
    func block() {
        entered.store(true, ordering: .sequentiallyConsistent)
        semaphore.wait()
    }
    var isBlocked: Bool { entered.load(ordering: .sequentiallyConsistent) }
    func release() { semaphore.signal() }
}

/// A flag raised and lowered by one thread, read by others.
final class Flag: Sendable {
    private let raised = Atomic<Bool>(false)
    func raise() { raised.store(true, ordering: .sequentiallyConsistent) }
    func lower() { raised.store(false, ordering: .sequentiallyConsistent) }
    var isRaised: Bool { raised.load(ordering: .sequentiallyConsistent) }
}

/// Runs `body` on a new OS thread and returns its result without blocking a
/// Swift concurrency thread (a producer blocked on a full ring must never sit
/// on the cooperative pool, which has one thread per core).
func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// The queue kinds every contract test runs on.
let allQueueKinds: [QueueKind] = [.lockFree, .bounded(capacity: 256, overflow: .block), .locked]

/// The executors every contract test runs on (with `allQueueKinds` where the
/// queue matters too).
let allExecutors = ExecutorKind.allCases

extension ExecutorKind {
    /// Runs `body` with an executor of this kind, made for the call: the
    /// shared pool; a new two-thread pool (named "spindle-test"), shut down
    /// when `body` returns, which stops its remaining loops with drain; a
    /// dedicated thread for each loop; a new serial queue.
    func withExecutor<R>(_ body: (SpinExecutor) async throws -> R) async throws -> R {
        switch self {
        case .sharedPool:
            return try await body(.sharedPool)
        case .dedicatedThread:
            return try await body(.dedicatedThread)
        case .serialQueue:
            return try await body(.queue(MarkedQueue("spindle-test-serial", mark: serialExecutorMark).queue))
        case .serialExecutor:
            let queue = MarkedQueue("spindle-test-serial-executor", mark: serialExecutorJobMark).queue
            return try await body(.serialExecutor(QueueSerialExecutor(queue)))
        case .mainActor:
            _ = mainQueueMark
            return try await body(.mainActor)
        case .enqueuing:
            let queue = MarkedQueue("spindle-test-enqueuing")
            queue.queue.setSpecific(key: enqueuingMark.key, value: true)
            let context = queue.mark
            return try await body(.enqueuing(name: "test queue", isCurrent: { context.isCurrent }) {
                queue.queue.async(execute: $0)
            })
        case .privatePool:
            let pool = try ReducerPool(threads: 2, name: "spindle-test")
            let result: R
            do {
                result = try await body(.pool(pool))
            } catch {
                try? await pool.shutdown()
                throw error
            }
            try await pool.shutdown()
            return result
        }
    }

    /// Whether the caller runs where a loop on this kind of executor runs
    /// its slices: on a thread of the shared pool ("spindle-shared-N"), of a
    /// `withExecutor` pool ("spindle-test-N"), on a dedicated loop thread
    /// ("spindle-loop"), or on a serial queue made by `withExecutor`.
    var runsHere: Bool {
        switch self {
        case .sharedPool: Thread.current.name?.hasPrefix("spindle-shared") == true
        case .privatePool: Thread.current.name?.hasPrefix("spindle-test") == true
        case .dedicatedThread: Thread.current.name == "spindle-loop"
        case .serialQueue: serialExecutorMark.isCurrent
        case .serialExecutor: serialExecutorJobMark.isCurrent
        case .mainActor: mainQueueMark.isCurrent
        case .enqueuing: enqueuingMark.isCurrent
        }
    }
}

/// A dispatch-specific key: a queue set up with it can be recognised from
/// the code it runs.
final class QueueMark: Sendable {
    let key = DispatchSpecificKey<Bool>()
    /// Whether the caller runs on a queue marked with this mark.
    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
}

/// Marks the serial queues `withExecutor` makes for `.serialQueue`.
let serialExecutorMark = QueueMark()

/// Marks the queues of the `SerialExecutor`s `withExecutor` makes for
/// `.serialExecutor`.
let serialExecutorJobMark = QueueMark()

/// Marks the queues `withExecutor` makes for `.enqueuing` (each also has a
/// mark of its own, its executor's context check).
let enqueuingMark = QueueMark()

/// Marks the main queue (the main actor's executor on Linux), on first use
/// (a global's initializer runs once).
let mainQueueMark: QueueMark = {
    let mark = QueueMark()
    DispatchQueue.main.setSpecific(key: mark.key, value: true)
    return mark
}()

/// A serial queue that code can tell it runs on.
struct MarkedQueue: Sendable {
    let queue: DispatchQueue
    let mark: QueueMark

    init(_ label: String, mark: QueueMark = QueueMark()) {
        queue = DispatchQueue(label: label)
        self.mark = mark
        queue.setSpecific(key: mark.key, value: true)
    }

    /// Whether the caller runs on this queue (or another with its mark).
    var isCurrent: Bool { mark.isCurrent }
}

/// Identifies the calling OS thread (its pthread id), to tell which thread
/// ran a reducer or a feedback.
func currentThreadID() -> UInt {
    #if canImport(Darwin)
    UInt(bitPattern: pthread_self())
    #else
    UInt(pthread_self())
    #endif
}
