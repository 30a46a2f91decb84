import Foundation
import Synchronization

// Helpers shared by the test targets (package access, not a product).

/// A value behind an `NSLock` (pthread-based, so Thread Sanitizer sees it;
/// `Synchronization.Mutex` is invisible to TSan on Linux).
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched while `lock` is held.
    private let lock = NSLock()
    private var value: Value
    package init(_ value: Value) { self.value = value }
    package func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

/// A thread-safe list that effects, sinks and threads append to.
package final class Recorder<Value: Sendable>: Sendable {
    private let storage = Locked<[Value]>([])
    package init() {}
    package func append(_ value: Value) { storage.withLock { $0.append(value) } }
    package var values: [Value] { storage.withLock { $0 } }
    package var count: Int { storage.withLock { $0.count } }
}

/// An atomic counter any thread may bump (C11-style atomics, which TSan sees).
package final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    package init() {}
    @discardableResult
    package func add(_ amount: Int = 1) -> Int { value.wrappingAdd(amount, ordering: .sequentiallyConsistent).newValue }
    package var current: Int { value.load(ordering: .sequentiallyConsistent) }
}

/// A door that opens once: `wait` returns once `open` has been called,
/// whether before or after. Waiting ignores task cancellation on purpose: it
/// models an effect that does not cooperate, so discarding its late events
/// is the engine's job.
package final class OpenOnce: Sendable {
    private struct Door {
        var isOpen = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let door = Locked(Door())

    package init() {}

    package func open() {
        let waiters = door.withLock { door in
            door.isOpen = true
            defer { door.waiters = [] }
            return door.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    package func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let isOpen = door.withLock { door in
                if !door.isOpen { door.waiters.append(continuation) }
                return door.isOpen
            }
            if isOpen { continuation.resume() }
        }
    }
}
