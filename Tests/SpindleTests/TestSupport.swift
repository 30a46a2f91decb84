import Dispatch
import Foundation
import Spindle
import Synchronization

/// A value behind an `NSLock` (pthread-based, so Thread Sanitizer sees it;
/// `Synchronization.Mutex` is invisible to TSan on Linux).
final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched while `lock` is held.
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

/// A thread-safe list that tests append to from effects and threads.
final class Recorder<Value: Sendable>: Sendable {
    private let storage = Locked<[Value]>([])
    func append(_ value: Value) { storage.withLock { $0.append(value) } }
    var values: [Value] { storage.withLock { $0 } }
    var count: Int { storage.withLock { $0.count } }
}

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

/// Polls `condition` every millisecond until it holds or `seconds` pass.
/// - Returns: whether it held.
func eventually(within seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 1_000_000)
    }
    return condition()
}

/// Runs `body` on `count` separate OS threads at once, and waits for all.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.start()
    }
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        group.notify(queue: .global()) { continuation.resume() }
    }
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
let allQueueKinds: [QueueKind] = [.lockFree, .bounded(capacity: 256, overflow: .block), .baseline]
