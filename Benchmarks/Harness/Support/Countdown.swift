import Synchronization

/// A countdown that async code awaits without blocking a thread: `arrive()`
/// from any thread (effects, producer threads, the reducer thread), `wait`
/// from a task. Arrivals past zero are ignored.
final class Countdown: Sendable {
    private struct State {
        var remaining: Int
        var nextID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
    }

    // protected by the mutex
    private let state: Mutex<State>

    init(_ count: Int) {
        state = Mutex(State(remaining: count))
    }

    /// Counts one arrival; at zero, resumes every waiter.
    func arrive() {
        let waiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            guard state.remaining > 0 else { return [] }
            state.remaining -= 1
            guard state.remaining == 0 else { return [] }
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// True once the count reached zero.
    var isComplete: Bool { state.withLock { $0.remaining == 0 } }

    /// Waits until the count reaches zero, or throws after `timeout`.
    func wait(timeout: Duration, _ what: @autoclosure () -> String, in run: ScenarioRun) async throws {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID += 1 }
            return state.nextID
        }
        let timer = Task { [self] in
            try await Task.sleep(for: timeout)
            expire(id)
        }
        let completed = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let now = state.withLock { state -> Bool in
                if state.remaining == 0 { return true }
                state.waiters[id] = continuation
                return false
            }
            if now { continuation.resume(returning: true) }
        }
        timer.cancel()
        try expect(completed, "timed out after \(timeout) waiting for \(what())", in: run)
    }

    private func expire(_ id: UInt64) {
        let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
        waiter?.resume(returning: false)
    }
}
