internal import Atomics

/// Tasks waiting for space in a full bounded queue: an effect's `.block`
/// emit suspends here instead of blocking its thread, which may be one of
/// Swift's cooperative threads (two on a 2-core machine: two blocked
/// emitters would starve every async effect of the process).
///
/// The protocol is the parker's, in Swift, and each waiter keeps it for
/// itself: a waiter registers (a sequentially consistent increment of
/// `count`), then re-checks its condition; the consumer frees slots, fences
/// (the parker's notify does), then reads `count` and resumes everyone
/// registered. Either the waiter's re-check sees the space (it then takes
/// itself out and goes on), or the consumer's load sees the waiter: no lost
/// wake-up. A resumed waiter checks again and may wait again.
///
/// Thread safety: any thread.
final class AsyncSpaceWaiters: Sendable {
    private struct Waiters {
        var byID: [UInt64: UnsafeContinuation<Void, Never>] = [:]
        var nextID: UInt64 = 0
    }

    // protected by lock
    private let waiters = Lock(Waiters())
    /// atomic: any thread. How many waiters are registered (read without
    /// the lock by the consumer, once per run of freed slots).
    private let count = ManagedAtomic<Int>(0)

    /// Suspends until ``resumeAll()`` runs after this call began, unless
    /// `condition` already holds after registering.
    func wait(unless condition: () -> Bool) async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let id = waiters.withLock { waiters -> UInt64 in
                let id = waiters.nextID
                waiters.nextID &+= 1
                waiters.byID[id] = continuation
                return id
            }
            count.wrappingIncrement(ordering: .sequentiallyConsistent)
            guard condition() else { return }
            // Space already: take itself out again, unless the consumer
            // has just resumed it.
            let mine = waiters.withLock { $0.byID.removeValue(forKey: id) }
            if let mine {
                count.wrappingDecrement(ordering: .relaxed)
                mine.resume()
            }
        }
    }

    /// Resumes every registered waiter. Call it after making space (or
    /// closing the queue) and a sequentially consistent fence. One relaxed
    /// load when nobody waits.
    @inline(__always)
    func resumeAll() {
        guard count.load(ordering: .relaxed) > 0 else { return }
        resumeWaiting()
    }

    @inline(never)
    private func resumeWaiting() {
        let taken = waiters.withLock { waiters -> [UnsafeContinuation<Void, Never>] in
            count.wrappingDecrement(by: waiters.byID.count, ordering: .relaxed)
            defer { waiters.byID.removeAll() }
            return Array(waiters.byID.values)
        }
        for waiter in taken { waiter.resume() }
    }
}
