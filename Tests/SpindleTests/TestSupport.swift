import Dispatch
import Foundation
import Spindle
import Synchronization
import SpindleTestSupport

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
