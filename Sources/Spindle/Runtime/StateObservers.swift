internal import Atomics

/// The observers of `SpinLoop.states`: each sees the loop's current state
/// first, then every new state, in reduction order.
///
/// All delivery happens on the reducer thread: a new observer waits in
/// `pending` until the reducer's next publish, where it receives the state
/// of that moment and joins `active` — so there is no gap and no duplicate.
///
/// Thread safety: `subscribe` from any thread; `deliver` and `finish` on the
/// reducer thread only. No subscription's `append` or `end` (which resume
/// waiting tasks) runs under the lock (see `deliver`).
final class StateObservers<State: Sendable>: Sendable {
    private struct Storage {
        var active: [UInt64: StateSubscription<State>] = [:]
        var pending: [UInt64: StateSubscription<State>] = [:]
        var nextID: UInt64 = 0
        var finalState: State?
        /// The subscriptions (active or pending) that keep more than the
        /// latest state.
        var everyState: Set<UInt64> = []
    }

    // protected by lock
    private let storage = Lock(Storage())
    // UnsafeAtomic rather than ManagedAtomic for the flags the reducer reads
    // per event or batch: ManagedAtomic's storage-pointer getter is an
    // out-of-line generic call, on the reducer's path.
    /// atomic: any thread. True while any observer is active or pending, so
    /// the reducer knows whether to collect each state of a batch.
    let isObserved = UnsafeAtomic<Bool>.create(false)
    /// atomic: any thread. True while an observer waits for its first state.
    let hasPending = UnsafeAtomic<Bool>.create(false)
    /// atomic: any thread. True while an observer keeps more than the latest
    /// state (a limit above 1), so that the reducer must collect each state
    /// of a batch; observers of the latest state only are given the batch's
    /// last state, which is all they would keep. Stored before `hasPending`.
    let needsEveryState = UnsafeAtomic<Bool>.create(false)
    /// atomic: any thread; changed under the lock. Counts the changes of
    /// the active subscriptions (joins, removals), so that the runner knows
    /// whether its list of them is still right.
    let membership = UnsafeAtomic<UInt64>.create(0)
    // Runner only (`deliver` runs on the loop's one runner at a time, and
    // the scheduling protocol orders consecutive runners): the active
    // subscriptions as of `deliveredMembership`, which a delivery hands
    // states to outside the lock.
    nonisolated(unsafe) private var deliveryScratch: [StateSubscription<State>] = []
    nonisolated(unsafe) private var deliveredMembership: UInt64 = .max

    deinit {
        isObserved.destroy()
        hasPending.destroy()
        needsEveryState.destroy()
        membership.destroy()
    }

    /// A new stream of states, keeping at most `limit` waiting (the newest;
    /// see `SpinStates.BufferingPolicy`). `wake` is called to get the reducer thread to
    /// deliver the first state promptly.
    func subscribe(limit: Int = .max, wake: @Sendable () -> Void) -> SpinStates<State> {
        let (subscription, joined) = storage.withLock { storage -> (StateSubscription<State>, Bool) in
            let id = storage.nextID
            storage.nextID += 1
            // Strong, not weak: a weak reference would give the observers a
            // side table, and every retain of them (each publishing batch
            // takes one) the runtime's slow path. The cycle it makes
            // (observers → subscription → this closure → observers) ends
            // when the subscription does: it drops the closure once called,
            // and at its end (the subscriber leaving, or `finish`).
            let subscription = StateSubscription<State>(limit: limit, onCancel: { self.remove(id) })
            if let finalState = storage.finalState {
                subscription.append(finalState)
                subscription.end(cancelled: false)
                return (subscription, false)
            }
            storage.pending[id] = subscription
            if limit > 1 {
                storage.everyState.insert(id)
                needsEveryState.store(true, ordering: .sequentiallyConsistent)
            }
            isObserved.store(true, ordering: .sequentiallyConsistent)
            hasPending.store(true, ordering: .sequentiallyConsistent)
            return (subscription, true)
        }
        if joined { wake() }
        return SpinStates(subscription)
    }

    /// Subscriptions that receive states (active or pending). Any thread.
    var count: Int {
        storage.withLock { $0.active.count + $0.pending.count }
    }

    private func remove(_ id: UInt64) {
        storage.withLock { storage in
            storage.active[id] = nil
            storage.pending[id] = nil
            membership.wrappingIncrement(ordering: .releasing)
            if storage.everyState.remove(id) != nil, storage.everyState.isEmpty {
                needsEveryState.store(false, ordering: .relaxed)
            }
            isObserved.store(!storage.active.isEmpty || !storage.pending.isEmpty, ordering: .relaxed)
        }
    }

    /// Yields `batch` to active observers; pending ones get `firstState`,
    /// then `batch[pendingFrom...]`, and become active. Reducer thread only.
    ///
    /// The states are handed over after the lock is released: appending
    /// resumes a waiting `next()`, which takes the Swift runtime's lock on
    /// that task, and a task being cancelled holds that lock while its
    /// cancellation handler ends the subscription, which takes this lock
    /// (`remove`): holding this lock while resuming would deadlock the two. A
    /// subscription removed in between ignores the append (it has ended);
    /// one that subscribes in between is pending until the next delivery.
    /// Only the runner delivers, so batches still arrive in order.
    func deliver(_ batch: UnsafeBufferPointer<State>, pendingFrom: Int, firstState: State) {
        // The usual batch: nobody joins, nobody left since the last one.
        // The runner's list of the active subscriptions is still right (a
        // subscription removed since, found there, ignores the append), so
        // neither the lock nor the dictionary is needed.
        if !hasPending.load(ordering: .relaxed), membership.load(ordering: .acquiring) == deliveredMembership {
            for subscription in deliveryScratch { subscription.append(batch) }
            return
        }
        var active = deliveryScratch
        active.removeAll(keepingCapacity: true)
        deliveryScratch = []
        let joining = storage.withLock { storage -> [StateSubscription<State>] in
            defer { deliveredMembership = membership.load(ordering: .relaxed) }
            active.append(contentsOf: storage.active.values)
            guard !storage.pending.isEmpty else { return [] }
            let joining = Array(storage.pending.values)
            for (id, subscription) in storage.pending { storage.active[id] = subscription }
            storage.pending.removeAll()
            hasPending.store(false, ordering: .relaxed)
            membership.wrappingIncrement(ordering: .relaxed)
            return joining
        }
        for subscription in active {
            subscription.append(batch)
        }
        for subscription in joining {
            subscription.append(firstState)
            subscription.append(UnsafeBufferPointer(rebasing: batch[pendingFrom...]))
        }
        // The list is kept for the next batches (with the joiners, which
        // are active from now on).
        active.append(contentsOf: joining)
        deliveryScratch = active
    }

    /// Ends every stream after the final state. Later subscribers get the
    /// final state and an immediate end. Reducer thread only.
    func finish(final: State) {
        // As in `deliver`: states and ends are handed over outside the lock.
        let (active, pending) = storage.withLock { storage in
            let lists = (Array(storage.active.values), Array(storage.pending.values))
            storage.active.removeAll()
            storage.pending.removeAll()
            storage.finalState = final
            storage.everyState.removeAll()
            needsEveryState.store(false, ordering: .relaxed)
            isObserved.store(false, ordering: .relaxed)
            hasPending.store(false, ordering: .relaxed)
            return lists
        }
        deliveryScratch = []
        for subscription in pending { subscription.append(final) }
        for subscription in active + pending { subscription.end(cancelled: false) }
    }
}
