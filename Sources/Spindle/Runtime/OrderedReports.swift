/// Observer calls made in the order of a lock's critical sections, but run
/// outside that lock.
///
/// A caller appends its calls while it holds its own lock (so the order of
/// appends is the order of its critical sections), releases the lock, then
/// calls ``drain()``: the first thread to drain runs every pending call, in
/// order, until none is left; a thread that finds another one draining
/// leaves its calls to it. So observer code never runs under the engine's
/// locks, and still sees a run's start, cancellation and end in that order.
///
/// **Thread safety:** any thread.
final class OrderedReports: Sendable {
    private struct Pending: Sendable {
        var calls: [@Sendable () -> Void] = []
        var draining = false
    }

    // protected by lock
    private let pending = Lock(Pending())

    /// Appends `call`. Call it under the lock whose order it must follow.
    func append(_ call: @escaping @Sendable () -> Void) {
        pending.withLock { $0.calls.append(call) }
    }

    /// Runs the pending calls unless another thread already is. Call it
    /// with no lock held.
    func drain() {
        var batch: [@Sendable () -> Void] = pending.withLock { pending in
            guard !pending.draining, !pending.calls.isEmpty else { return [] }
            pending.draining = true
            defer { pending.calls = [] }
            return pending.calls
        }
        while !batch.isEmpty {
            for call in batch { call() }
            batch = pending.withLock { pending in
                guard !pending.calls.isEmpty else {
                    pending.draining = false
                    return []
                }
                defer { pending.calls = [] }
                return pending.calls
            }
        }
    }
}
