internal import CSpindle
internal import Atomics

// A slice of a loop's work, run by its executor (one runner at a time):
// drain up to a budget of events, reduce each in order, run the inline
// feedbacks after each reduction, publish the state, hand the batch's states
// to queued feedbacks and observers. The stop's last slice drains and
// finishes.
extension LoopCore {
    func slice(budget: Int) -> SliceOutcome {
        assertOnRunner()
        if let reductionGate { return gatedSlice(reductionGate) }
        var reduced: Int?
        if beginSlice(budget: budget) != .discard {
            let count: Int
            if let hub {
                count = reduceBatchObserved(max: budget, hub: hub)
            } else {
                let fromQueue = drainQueue(max: budget, { payload in reduce(movingFrom: payload) },
                                           runs: { first, count in reduceRun(movingFrom: first, count: count) })
                let fromRunner = reduceReentrant(max: budget)
                count = fromQueue + fromRunner
                if count > 0 || observersPending {
                    publish(newStates: count > 0)
                }
                if fromQueue == budget || fromRunner == budget { return .more }
            }
            // Feedbacks that take the latest state ran in `publish`; the
            // events they emitted wait in the runner's own queue, which a
            // runner going idle would not see.
            if count >= budget || (runner.hasLatestInlineWorkers && !runner.reentrant.isEmpty) { return .more }
            reduced = count
        }
        return endSlice(reduced: reduced, beforeFinish: {})
    }

    /// The in-place path's first slice (`emitOnOwnExecutor`): `event`,
    /// then the events the inline feedbacks emit on the runner, reduced,
    /// and their states published, as a slice reduces the runner's own
    /// queue. The shared queue is left to the scheduling's end: an event
    /// there came from an emit concurrent with this one (the take found
    /// the queue empty), and the idle re-check hands it to the executor.
    /// The first slice of a loop (the initial state's delivery) and a
    /// slice after a stop request are the general slice's, with `event`
    /// first in the runner's own queue, as the direct path leaves it.
    func sliceInPlace(_ event: Event) -> SliceOutcome {
        assertOnRunner()
        guard runner.started, stopRequest.load(ordering: .relaxed) == .none else {
            runner.reentrant.append(event)
            return slice(budget: budget)
        }
        runner.collecting = runner.hasEveryStateQueuedWorkers || observersNeedEveryState
        // A slot of its own for the event, which the reducer moves out of
        // (as it moves a queued event out of its slot).
        withUnsafeTemporaryAllocation(of: Event.self, capacity: 1) { slot in
            slot.baseAddress.unsafelyUnwrapped.initialize(to: event)
            reduce(movingFrom: UnsafeMutableRawPointer(slot.baseAddress.unsafelyUnwrapped))
        }
        let budget = budget
        let fromRunner = runner.reentrant.isEmpty ? 0 : reduceReentrant(max: budget &- 1)
        publish(newStates: true)
        let count = 1 &+ fromRunner
        if count >= budget || !runner.reentrant.isEmpty { return .more }
        return endSlice(reduced: count, beforeFinish: {})
    }

    /// The start of every slice: the first one delivers the initial state;
    /// a discarding stop throws queued events away (checked every slice,
    /// so that it takes effect at once); otherwise the batch is told
    /// whether to collect its states. Returns the stop request.
    @inline(__always)
    private func beginSlice(budget: Int) -> StopRequest {
        if !runner.started { deliverInitialState() }
        let stop = stopRequest.load(ordering: .relaxed)
        if stop == .discard {
            runner.discardedCount &+= throwAwayQueued(max: budget)
        } else {
            // Observers of the latest state only are given the batch's last
            // state (`publish`): nothing to collect for them.
            runner.collecting = runner.hasEveryStateQueuedWorkers || observersNeedEveryState
        }
        return stop
    }

    /// The end of a slice that has no more to do now: `reduced` events
    /// (nil: a discarding stop's slice, which reduced none). Before the
    /// grace period is over the loop is drained (its let-go lanes freed);
    /// after it, no emit is on its way into the queue, and the loop
    /// finishes once the queues are empty, `beforeFinish` first.
    @inline(__always)
    private func endSlice(reduced: Int?, beforeFinish: () -> Void) -> SliceOutcome {
        let graceOver = graceDone.load(ordering: .acquiring)
        if !graceOver {
            if reduced != nil, laneSet != nil { reclaimLanes() }
            return .drained(reduced: reduced ?? 0)
        }
        if !queueIsEmpty || !runner.reentrant.isEmpty { return .more }
        beforeFinish()
        finish()
        return .finished
    }

    var visibleWork: Bool {
        (gateAdmits && !queueLooksEmpty) || observersPending || graceDone.load(ordering: .relaxed)
            || words.settlePending.load(ordering: .relaxed)
    }

    // A hint for the runner's linger: lanes are read without the heavy
    // fence (a membarrier per look would cost more than the linger saves).
    var runnerWork: Bool {
        let queued = queueTag == .lockFree ? !lockFreeQueue!.isEmpty || lanesHaveWork : !queueIsEmpty
        return (gateAdmits && (queued || !runner.reentrant.isEmpty)) || observersPending
            || graceDone.load(ordering: .relaxed) || stopRequest.load(ordering: .relaxed) == .discard
    }

    /// Whether the loop may reduce its queued events: it has no reduction
    /// gate, its gate is open, or a stop was requested (a drain reduces
    /// everything accepted). The gate's load first, then the stop's: both
    /// after the caller's idle store and fence (PROTOCOL.md, "The reduction
    /// gate").
    @inline(__always)
    var gateAdmits: Bool {
        guard let reductionGate else { return true }
        return reductionGate.isOpen || stopRequest.load(ordering: .relaxed) != .none
    }

    /// A slice of a gated loop (``ReductionGate``): at most one event, and
    /// only while the gate admits it; its state goes to the feedbacks, then
    /// to the gate's consumer, before the next event is reduced. Off the
    /// ungated path, which pays one nil check per slice for it.
    @inline(never)
    private func gatedSlice(_ gate: ReductionGate<State>) -> SliceOutcome {
        var reduced: Int?
        let stop = beginSlice(budget: budget)
        if stop != .discard {
            var count = 0
            if gate.isOpen || stop != .none {
                if let hub {
                    count = reduceBatchObserved(max: 1, hub: hub, oneEvent: true)
                } else {
                    // The runner's own events first: an inline feedback's
                    // answer to the state just delivered, as a Combine
                    // chain would reduce it at once.
                    count = reduceReentrant(max: 1)
                    if count == 0 {
                        count = drainQueue(max: 1, { payload in reduce(movingFrom: payload) },
                                           runs: { first, count in reduceRun(movingFrom: first, count: count) })
                    }
                    if count > 0 || observersPending { publish(newStates: count > 0) }
                }
            } else if observersPending {
                publish(newStates: false)
            }
            if count > 0 {
                gate.deliver(state)
                if gateAdmits, !queueIsEmpty || !runner.reentrant.isEmpty { return .more }
            }
            reduced = count
        }
        // Before the loop's own end: a `stop()` that returns has seen it.
        return endSlice(reduced: reduced, beforeFinish: gate.finished)
    }

    /// The first slice: observers hear of the start, every feedback sees the
    /// initial state first.
    private func deliverInitialState() {
        runner.started = true
        let initial = state
        hub?.loopStarted(initialState: initial)
        if runner.hasInlineWorkers { runInlineWorkers(from: unretained(runner.firstInlineWorker)) }
        if runner.hasLatestInlineWorkers { runInlineWorkers(from: unretained(runner.firstLatestInlineWorker)) }
        if runner.hasQueuedWorkers {
            runner.batchStates.append(initial)
            for worker in workers!.queued { worker.deliver(runner.batchStates.elements) }
            runner.batchStates.removeAll()
        }
    }

    @inline(__always)
    // `payload` holds the event; the reducer moves it out.
    private func reduce(movingFrom payload: UnsafeMutableRawPointer) {
        // Checked per event, after the event was dequeued: an observer that
        // subscribed before emitting sees the states its own events make.
        if runner.observerBaseIndex < 0, observersPending {
            runner.observerBaseIndex = runner.batchStates.count
            runner.observerBaseState = state
            // Read after `hasPending`, stored before it: a joining observer
            // that keeps every state is seen here.
            if observersNeedEveryState { runner.collecting = true }
        }
        reduceFunction(&statePointer.pointee, payload)
        runner.reducedCount &+= 1
        if runner.hasInlineWorkers { runInlineWorkers(from: unretained(runner.firstInlineWorker)) }
        if runner.collecting { runner.batchStates.append(statePointer.pointee) }
    }

    // A lane's run of `count` adjacent events: reduced in one call to the
    // reducer's specialized loop when nothing needs the states in between
    // (no every-state inline feedback, no state collection), else one by
    // one. The observer check is made once per run: every event in the run
    // was published before the runner read the lane's count (acquire), so a
    // subscription made before one of those emits is seen here.
    @inline(__always)
    private func reduceRun(movingFrom first: UnsafeMutableRawPointer, count: Int) {
        if runner.observerBaseIndex < 0, observersPending {
            runner.observerBaseIndex = runner.batchStates.count
            runner.observerBaseState = state
            // Read after `hasPending`, stored before it: a joining observer
            // that keeps every state is seen here.
            if observersNeedEveryState { runner.collecting = true }
        }
        if let reduceRunFunction, !runner.hasInlineWorkers, !runner.collecting {
            reduceRunFunction(&statePointer.pointee, first, count)
            runner.reducedCount &+= count
        } else {
            var payload = first
            for _ in 0..<count {
                reduce(movingFrom: payload)
                payload += MemoryLayout<Event>.stride
            }
        }
    }

    // Runs a chain of inline workers (linked through `nextInline`) with the
    // current state: the every-state chain after each reduction, the
    // latest-state chain once per batch. Out of line on purpose: kept out of
    // `reduce`, which runs for every event whether or not the loop has
    // inline workers.
    @inline(never)
    private func runInlineWorkers(from first: Unmanaged<FeedbackWorker<State, Event>>) {
        // A discarding stop ends deliveries at once, even within a batch.
        if stopRequest.load(ordering: .relaxed) == .discard { return }
        let current = state
        // Unretained and guaranteed: the chain holds every worker in it, and
        // only the loop's finish, at a slice's end, cuts it. (An `unowned(unsafe)`
        // variable still cost a retain and a release of each worker and of
        // its effect's context per state: the optimizer made it strong for
        // the call.)
        let unobserved = hub == nil
        var worker = first
        var more = true
        while more {
            more = worker._withUnsafeGuaranteedRef { running in
                running.runInline(current, unobserved: unobserved)
                guard let following = running.nextInline else { return false }
                worker = Unmanaged.passUnretained(following)
                return true
            }
        }
    }

    /// The head of an inline chain its `has…` flag says is set, unretained
    /// at once: the chain keeps it, and a strong reference read out of the
    /// runner's fields would be retained and released around the walk.
    @inline(__always)
    private func unretained(_ head: FeedbackWorker<State, Event>?) -> Unmanaged<FeedbackWorker<State, Event>> {
        Unmanaged.passUnretained(head.unsafelyUnwrapped)
    }

    // Events emitted on the runner itself (inline feedbacks, gears).
    private func reduceReentrant(max: Int) -> Int {
        drainReentrant(max: max) { payload in reduce(movingFrom: payload) }
    }

    // Hands up to `max` reentrant events to `body`, which moves each out;
    // returns how many.
    @inline(__always)
    private func drainReentrant(max: Int, _ body: (UnsafeMutableRawPointer) -> Void) -> Int {
        if runnerEmitsThroughQueue {
            moveReentrantToQueue()
            return 0
        }
        var count = 0
        while count < max, !runner.reentrant.isEmpty {
            runner.reentrant.removeFirst(movingWith: body)
            count += 1
        }
        return count
    }

    // Under a manual drive (SpindleTesting's runner), the events emitted in
    // the slice go to the custom queue, after the events already there,
    // instead of being reduced in this slice: one FIFO the test steps
    // through (see `ManualDrive`). Checked once per slice, after the
    // reductions and again after the latest-state feedbacks (`publish`).
    @inline(never)
    private func moveReentrantToQueue() {
        while !runner.reentrant.isEmpty {
            runner.reentrant.removeFirst(movingWith: { payload in
                let event = payload.assumingMemoryBound(to: Event.self).move()
                withCustomQueue { calls, queue in calls.enqueue(queue, event) }
            })
        }
    }

    // MARK: Observed loops (a spin with observers; see SpinObserver)

    // A batch as in the slice above, timed and reported to the observers;
    // with per-event observers, each event is copied before it is reduced
    // and reported with its new state. Separate from the unobserved path so
    // that path pays nothing. Returns the events reduced (`max` or more when
    // work remains).
    private func reduceBatchObserved(max: Int, hub: ObserverHub<State, Event>, oneEvent: Bool = false) -> Int {
        // The C clock (the vDSO's `clock_gettime`, one call): `ContinuousClock`
        // goes through the concurrency runtime's code, lines a sporadic
        // event's batch loads cold.
        let start = spindle_monotonic_ns()
        var fromQueue: Int
        var fromRunner: Int
        if oneEvent {
            // A gated slice's one event, the runner's own first (see `gatedSlice`).
            let body: (UnsafeMutableRawPointer) -> Void = hub.wantsEachEvent
                ? { payload in self.reduceReporting(movingFrom: payload, to: hub) }
                : { payload in self.reduce(movingFrom: payload) }
            fromRunner = drainReentrant(max: 1, body)
            fromQueue = fromRunner == 0 ? drainQueue(max: 1, body) : 0
        } else if hub.wantsEachEvent {
            fromQueue = drainQueue(max: max) { payload in reduceReporting(movingFrom: payload, to: hub) }
            fromRunner = drainReentrant(max: max) { payload in reduceReporting(movingFrom: payload, to: hub) }
        } else {
            fromQueue = drainQueue(max: max) { payload in reduce(movingFrom: payload) }
            fromRunner = reduceReentrant(max: max)
        }
        let reduced = fromQueue + fromRunner
        if reduced > 0 || observersPending {
            publish(newStates: reduced > 0)
        }
        if reduced > 0 {
            let depth = acceptedCount.load(ordering: .relaxed) &- runner.reducedCount
            hub.batchReduced(ReductionBatch(
                events: reduced, totalReduced: runner.reducedCount,
                queueDepth: Swift.max(depth, 0),
                duration: .nanoseconds(Int64(truncatingIfNeeded: spindle_monotonic_ns() &- start))))
        }
        return fromQueue == max || fromRunner == max ? Swift.max(reduced, max) : reduced
    }

    @inline(never)
    private func reduceReporting(movingFrom payload: UnsafeMutableRawPointer, to hub: ObserverHub<State, Event>) {
        let event = payload.assumingMemoryBound(to: Event.self).pointee
        reduce(movingFrom: payload)
        hub.eventReduced(event, newState: state, reduction: runner.reducedCount)
    }

    // A discarding stop throws up to `max` queued events away, telling the
    // observers; returns how many.
    private func throwAwayQueued(max: Int) -> Int {
        let fromQueue = drainQueue(max: max) { payload in throwAway(movingFrom: payload) }
        return fromQueue + drainReentrant(max: max) { payload in throwAway(movingFrom: payload) }
    }

    private func throwAway(movingFrom payload: UnsafeMutableRawPointer) {
        let event = payload.assumingMemoryBound(to: Event.self).move()
        hub?.eventDiscardedAtStop(event)
    }

    // End of a batch: the snapshot, the counters, feedbacks, observers.
    // `newStates` false: nothing was reduced, the slice only serves a new
    // `states` subscriber; the feedbacks have seen this state already and
    // must not see it again.
    private func publish(newStates: Bool) {
        snapshot.publish(state)
        words.reduced.store(runner.reducedCount, ordering: .releasing)
        if newStates { publishToFeedbacks() }
        if let observers, observers.isObserved.load(ordering: .relaxed) {
            if runner.collecting {
                if runner.observerBaseIndex < 0 {
                    observers.deliver(runner.batchStates.elements, pendingFrom: runner.batchStates.count, firstState: state)
                } else {
                    observers.deliver(runner.batchStates.elements, pendingFrom: runner.observerBaseIndex, firstState: runner.observerBaseState)
                }
            } else {
                publishLatest(to: observers, newStates: newStates)
            }
        }
        runner.observerBaseIndex = -1
        // Only a collecting slice appended states. Guarded because the call
        // asks the runtime for the batch's generic metadata (this code is
        // unspecialized): a lookup per slice of every loop otherwise.
        if runner.collecting { runner.batchStates.removeAll() }
    }

    /// The batch's last state, for observers that keep only the latest: the
    /// one-state batch, the state a joining observer began from first.
    private func publishLatest(to observers: StateObservers<State>, newStates: Bool) {
        let current = state
        withUnsafePointer(to: current) { last in
            let batch = UnsafeBufferPointer(start: last, count: newStates ? 1 : 0)
            if runner.observerBaseIndex < 0 {
                observers.deliver(batch, pendingFrom: batch.count, firstState: current)
            } else {
                observers.deliver(batch, pendingFrom: 0, firstState: runner.observerBaseState)
            }
        }
    }

    private func publishToFeedbacks() {
        if runner.hasQueuedWorkers {
            for worker in workers!.queued {
                if worker.takesLatestOnly {
                    worker.deliverLatest(state)
                } else {
                    worker.deliver(runner.batchStates.elements)
                }
            }
        }
        if runner.hasLatestInlineWorkers {
            runInlineWorkers(from: unretained(runner.firstLatestInlineWorker))
            if runnerEmitsThroughQueue { moveReentrantToQueue() }
        }
    }

    // The grace period is over and everything accepted is reduced (or
    // discarded): stop the workers, end the observers, report, and leave
    // the executor.
    private func finish() {
        counters.discardedAtStop.store(runner.discardedCount, ordering: .relaxed)
        snapshot.publish(state)
        words.reduced.store(runner.reducedCount, ordering: .releasing)

        // The stop completes once no drain of a feedback's queue is left
        // running: after `stop()` returns, no effect is called any more.
        let report = StopReport(reduced: runner.reducedCount, discarded: runner.discardedCount)
        let finalState = state
        let completing = Countdown(1) { [self] in complete(with: report, finalState: finalState) }
        for worker in workers?.queued ?? [] {
            completing.add()
            worker.stop(whenDrained: completing.done)
        }
        // The inline workers, from their two chains (each in declaration
        // order), merged back into declaration order; each link is cut as
        // it is passed, so the chain is released worker by worker.
        var every = runner.firstInlineWorker
        var latest = runner.firstLatestInlineWorker
        runner.firstInlineWorker = nil
        runner.firstLatestInlineWorker = nil
        // (`unretained` reads a head only while its flag is set.)
        runner.hasInlineWorkers = false
        runner.hasLatestInlineWorkers = false
        while every != nil || latest != nil {
            let worker: FeedbackWorker<State, Event>
            if let next = every, latest.map({ next.index < $0.index }) ?? true {
                worker = next
                every = next.nextInline
            } else {
                worker = latest!
                latest = worker.nextInline
            }
            worker.nextInline = nil
            completing.add()
            worker.stop(whenDrained: completing.done)
        }
        for worker in workers?.attached ?? [] {
            completing.add()
            worker.stop(whenDrained: completing.done)
        }
        // Break the worker -> core cycles; runs still finishing keep their
        // worker (and so this core) alive only until they return.
        workers = nil
        runner.batchStates.removeAll()
        runner.hasQueuedWorkers = false
        runner.hasEveryStateQueuedWorkers = false
        runner.hasInlineWorkers = false
        runner.hasLatestInlineWorkers = false
        lockFreeQueue?.flushFinishedNodes()
        executor.loopFinished(self)
        completing.done()
    }
}

/// Runs an action once every party added has called ``done()``.
///
/// Thread safety: any thread.
final class Countdown: Sendable {
    private let remaining: ManagedAtomic<Int>
    private let action: @Sendable () -> Void

    /// - Parameter parties: how many ``done()`` calls to wait for, before
    ///   any ``add()``.
    init(_ parties: Int, action: @escaping @Sendable () -> Void) {
        remaining = ManagedAtomic(parties)
        self.action = action
    }

    /// One more party to wait for; only before the count reaches zero.
    func add() { remaining.wrappingIncrement(ordering: .relaxed) }

    /// One party is done; the last one runs the action.
    @Sendable func done() {
        if remaining.wrappingDecrementThenLoad(ordering: .acquiringAndReleasing) == 0 { action() }
    }
}
