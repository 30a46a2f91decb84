import Atomics

/// The observers of `SpinLoop.states`: each sees the loop's current state
/// first, then every new state, in reduction order.
///
/// All delivery happens on the reducer thread: a new observer waits in
/// `pending` until the reducer's next publish, where it receives the state
/// of that moment and joins `active` — so there is no gap and no duplicate.
///
/// Thread safety: `subscribe` from any thread; `deliver` and `finish` on the
/// reducer thread only.
final class StateObservers<State: Sendable>: Sendable {
    private struct Storage {
        var active: [UInt64: AsyncStream<State>.Continuation] = [:]
        var pending: [UInt64: AsyncStream<State>.Continuation] = [:]
        var nextID: UInt64 = 0
        var finalState: State?
    }

    // protected by lock
    private let storage = Lock(Storage())
    // UnsafeAtomic rather than ManagedAtomic for the flags the reducer reads
    // per event or batch: ManagedAtomic's storage-pointer getter showed up as
    // an out-of-line generic call (~5% of the reducer thread in reduce-1p).
    /// atomic: any thread. True while any observer is active or pending, so
    /// the reducer knows whether to collect each state of a batch.
    let isObserved = UnsafeAtomic<Bool>.create(false)
    /// atomic: any thread. True while an observer waits for its first state.
    let hasPending = UnsafeAtomic<Bool>.create(false)

    deinit {
        isObserved.destroy()
        hasPending.destroy()
    }

    /// A new stream of states. `wake` is called to get the reducer thread to
    /// deliver the first state promptly.
    func subscribe(wake: @Sendable () -> Void) -> AsyncStream<State> {
        let (stream, continuation) = AsyncStream<State>.makeStream(bufferingPolicy: .unbounded)
        let id: UInt64? = storage.withLock { storage in
            if let finalState = storage.finalState {
                continuation.yield(finalState)
                continuation.finish()
                return nil
            }
            let id = storage.nextID
            storage.nextID += 1
            storage.pending[id] = continuation
            isObserved.store(true, ordering: .sequentiallyConsistent)
            hasPending.store(true, ordering: .sequentiallyConsistent)
            return id
        }
        guard let id else { return stream }
        continuation.onTermination = { [weak self] _ in self?.remove(id) }
        wake()
        return stream
    }

    private func remove(_ id: UInt64) {
        storage.withLock { storage in
            storage.active[id] = nil
            storage.pending[id] = nil
            isObserved.store(!storage.active.isEmpty || !storage.pending.isEmpty, ordering: .relaxed)
        }
    }

    /// Yields `batch` to active observers; pending ones get `firstState`,
    /// then `batch[pendingFrom...]`, and become active. Reducer thread only.
    func deliver(_ batch: UnsafeBufferPointer<State>, pendingFrom: Int, firstState: State) {
        storage.withLock { storage in
            for continuation in storage.active.values {
                for state in batch { continuation.yield(state) }
            }
            if !storage.pending.isEmpty {
                for (id, continuation) in storage.pending {
                    continuation.yield(firstState)
                    for index in pendingFrom..<batch.count { continuation.yield(batch[index]) }
                    storage.active[id] = continuation
                }
                storage.pending.removeAll()
                hasPending.store(false, ordering: .relaxed)
            }
        }
    }

    /// Ends every stream after the final state. Later subscribers get the
    /// final state and an immediate end. Reducer thread only.
    func finish(final: State) {
        let continuations = storage.withLock { storage in
            for continuation in storage.pending.values { continuation.yield(final) }
            let all = Array(storage.active.values) + Array(storage.pending.values)
            storage.active.removeAll()
            storage.pending.removeAll()
            storage.finalState = final
            isObserved.store(false, ordering: .relaxed)
            hasPending.store(false, ordering: .relaxed)
            return all
        }
        for continuation in continuations { continuation.finish() }
    }
}
