internal import CSpindle
internal import Atomics
import Dispatch

/// The engine behind a ``SpinLoop``: the gate that decides what `emit`
/// accepts, the event queue, the slices its executor runs, the feedback
/// workers.
///
/// The gate: every emit runs inside an RCU read-side section (liburcu's
/// urcu-bp, `spindle_gate_enter`/`exit`): it reads `closed` and, if the loop
/// is open, enqueues before leaving the section. Stop sets `closed` and asks
/// Spindle's grace thread to call back after a grace period
/// (`spindle_task_after_grace_period`), after which every
/// emit that missed `closed` has enqueued and every later one sees it; only
/// then does the loop's last slice drain and finish. So an emit either
/// answers `.stopped` or its event is reduced: nothing accepted is lost, and
/// no executor thread ever waits for the grace period. The section costs a
/// thread-local store (urcu-bp moves the barrier to the grace period).
///
/// Scheduling (see `ScheduledLoop` and `Model/PROTOCOL.md`): the emit that
/// finds the loop idle schedules it on its executor; one runner at a time
/// runs a slice of at most `options.maxBatch` events.
///
/// Thread safety: `emit`, `stop`, `requestStop`, `state` from any thread.
/// Properties marked "runner only" are touched only inside a slice, by the
/// one thread running it (checked in debug builds by `assertOnRunner()`);
/// consecutive runners are ordered by the scheduling state's CAS.
// `@unchecked Sendable`, restated from `ScheduledLoop` (a class hierarchy
// cannot be checked): every stored property below is immutable, an atomic,
// protected by a lock, or runner only, as its label says.
@usableFromInline
final class LoopCore<State: Sendable, Event: Sendable>: ScheduledLoop, @unchecked Sendable {
    let options: SpinOptions
    /// The reducer's function, stored directly so that the per-event path
    /// loads it without generic field-offset lookups.
    let reduceFunction: @Sendable (inout State, UnsafeMutableRawPointer) -> Void
    /// The reducer over a run of adjacent events (`Reducer.reduceRunInPlace`),
    /// for a lane's runs; nil for a reducer with effects.
    let reduceRunFunction: (@Sendable (inout State, UnsafeMutableRawPointer, Int) -> Void)?
    // The event queue, concretely typed (an existential would stop the
    // compiler from calling its methods directly): exactly one is non-nil,
    // named by `queueTag`. Unwrapped with `!` (a branch), not
    // `unsafelyUnwrapped`: that is a generic stdlib call in debug builds.
    let lockFreeQueue: LockFreeQueue?
    /// The lanes the runner reads (default queue only; see
    /// LoopCore+Lanes.swift): changed by the runner, scanned by any thread
    /// under the gate. Immutable pointer; the C set follows its own table.
    let laneSet: OpaquePointer?
    /// The loop's identity in the threads' lane tables: never reused.
    let loopID: UInt64
    let ringQueue: RingQueue<Event>?
    let baselineQueue: BaselineQueue<Event>?
    let counters = LoopCounters()
    let snapshot: StateSnapshot
    /// The `states` subscribers, created by the first subscription (most
    /// loops never have one): written once under `completion`'s lock before
    /// `words.observersCreated` is set (release); read after that flag.
    nonisolated(unsafe) private var observerStorage: StateObservers<State>?
    /// The spin's observers (see ``SpinObserver``); nil when it has none,
    /// which keeps every observer call off the engine's paths.
    let hub: ObserverHub<State, Event>?
    /// atomic: events accepted, counted only when observed (`hub` non-nil),
    /// so that batch reports can give the queue depth.
    var acceptedCount: UnsafeAtomic<Int> {
        @inline(__always) get { words.acceptedCount }
    }

    // The atomics every emit touches live on the loop's one line of words
    // (`LoopWords`): UnsafeAtomic views, not ManagedAtomic (whose
    // storage-pointer getter is an out-of-line generic call).
    /// atomic: set once by stop; read by every emit inside its gate section.
    var closed: UnsafeAtomic<Bool> {
        @inline(__always) get { words.closed }
    }
    /// atomic: the first stop request's mode (set once by CAS: the first
    /// request wins).
    var stopRequest: UnsafeAtomic<StopRequest> {
        @inline(__always) get { words.stopRequest }
    }
    /// atomic: set by the grace-period callback: no emit is still on its way
    /// into the queue, so the runner may drain and finish.
    var graceDone: UnsafeAtomic<Bool> {
        @inline(__always) get { words.graceDone }
    }

    // protected by lock: the final report and the stop calls waiting for it.
    let completion = Lock(LoopCompletion())

    // runner only: the running state, the states of the current batch,
    // events emitted on the runner itself, the workers.
    // (Raw buffers and scalars rather than Array/Deque/tuples: see RawFIFO.)
    // `@exclusivity(unchecked)`: one thread at a time touches them, so the
    // dynamic exclusivity checks (~5% of the reducer's time) prove nothing.
    // The state lives behind a pointer, not in a stored property: the reducer
    // passes `statePointer.pointee` to the user's reducer by address, where a
    // generic class property is first copied out (a value-witness call per
    // event, the reducer's largest cost in reduce-1p).
    let statePointer: UnsafeMutablePointer<State>
    var state: State {
        @inline(__always) get { statePointer.pointee }
    }
    @exclusivity(unchecked) var batchStates = RawBatch<State>()
    @exclusivity(unchecked) var reentrant = RawFIFO<Event>()
    @exclusivity(unchecked) var reducedCount = 0
    @exclusivity(unchecked) var discardedCount = 0
    /// Where waiting `states` observers start in this batch: they get
    /// `observerBaseState` first, then `batchStates[observerBaseIndex...]`.
    /// -1: no observer waiting.
    @exclusivity(unchecked) var observerBaseIndex = -1
    @exclusivity(unchecked) var observerBaseState: State
    /// The queued and attached feedback workers; nil for a loop with
    /// neither (empty arrays of a generic element type would cost this
    /// unspecialized code metadata lookups at every start). The inline ones
    /// are held by their chains (`firstInlineWorker`, `firstLatestInlineWorker`).
    var workers: LoopWorkers<State, Event>?
    /// The inline workers again, linked through `FeedbackWorker.runnerOwned.nextInline`
    /// (set at start): the per-reduction walk follows class references,
    /// where iterating the array in this unspecialized generic code asked
    /// the runtime for generic metadata on every reduction.
    @exclusivity(unchecked) var firstInlineWorker: FeedbackWorker<State, Event>?
    /// The inline workers that take only the latest state
    /// (`StateDelivery.latestState`), linked the same way: they run once per
    /// batch, in `publish`, not after each reduction.
    @exclusivity(unchecked) var firstLatestInlineWorker: FeedbackWorker<State, Event>?
    // The one-byte fields together, here: apart, each cost a word of
    // padding, and the core's size decides its allocation's size class.
    /// Which of the queues below is the loop's (see them).
    let queueTag: QueueTag
    /// Whether the first slice (the initial state's delivery) has run.
    @exclusivity(unchecked) var started = false
    /// Whether the current batch collects each state (for feedbacks or observers).
    @exclusivity(unchecked) var collecting = false
    @exclusivity(unchecked) var hasQueuedWorkers = false
    /// Whether a queued worker takes every state (the batch's states must
    /// then be collected); queued workers that take the latest get `state`.
    @exclusivity(unchecked) var hasEveryStateQueuedWorkers = false
    /// Whether `firstInlineWorker` is set (inline workers run after each reduction).
    @exclusivity(unchecked) var hasInlineWorkers = false
    /// Whether `firstLatestInlineWorker` is set.
    @exclusivity(unchecked) var hasLatestInlineWorkers = false
    /// The `settled()` calls the runner took at the start of a slice: resumed
    /// once a slice ends with the queue empty (LoopCore+Settle.swift).
    @exclusivity(unchecked) var settling: [CheckedContinuation<Void, Never>] = []

    /// Creates a loop to run on `executor` (started by `start(spin:)`).
    init(spin: Spin<State, Event>, options: SpinOptions, executor: any LoopExecutor) {
        self.options = options
        self.reduceFunction = spin.reducer.reduceInPlace
        self.reduceRunFunction = spin.reducer.reduceRunInPlace
        statePointer = .allocate(capacity: 1)
        statePointer.initialize(to: spin.initialState)
        self.observerBaseState = spin.initialState
        self.snapshot = StateSnapshot(spin.initialState)
        // Checked here, not by the hub's failable init: in this unspecialized
        // generic code, calling it (or counting the array) costs metadata
        // lookups per start.
        self.hub = spin.hasObservers ? ObserverHub(spin.observers) : nil
        var lockFree: LockFreeQueue?
        var ring: RingQueue<Event>?
        var baseline: BaselineQueue<Event>?
        switch options.queue {
        case .lockFree:
            queueTag = .lockFree
            lockFree = LockFreeQueue(of: Event.self)
        case .bounded(let capacity, _):
            queueTag = .ring
            ring = RingQueue<Event>(capacity: capacity)
        case .baseline:
            queueTag = .baseline
            baseline = BaselineQueue<Event>()
        }
        lockFreeQueue = lockFree
        ringQueue = ring
        baselineQueue = baseline
        laneSet = lockFree == nil ? nil : spindle_lane_set_create()
        loopID = Lanes.nextLoopID.loadThenWrappingIncrement(ordering: .relaxed)
        super.init(executor: executor)
        LiveCounts.loops.wrappingIncrement(ordering: .relaxed)
    }

    deinit {
        // A marker still queued: its lane's thread frees it (ORPHANED).
        lockFreeQueue?.discardAll(of: Event.self) { _ = spindle_lane_release_loop($0) }
        releaseLanes()
        // Last, as the released properties would have freed it before.
        lockFreeQueue?.destroy()
        statePointer.deinitialize(count: 1)
        statePointer.deallocate()
        LiveCounts.loops.wrappingDecrement(ordering: .relaxed)
    }

    /// Registers the loop with its executor (starting a dedicated thread),
    /// creates the workers, attaches gear feedbacks and schedules the first
    /// slice (which delivers the initial state). Called once, by `SpinLoop`.
    /// - Throws: when the executor cannot take the loop; the loop is then
    ///   stopped from birth (every emit answers `.stopped`).
    func start(spin: Spin<State, Event>) throws(SpinExecutorError) {
        do {
            try executor.register(self)
        } catch {
            finishUnstarted()
            throw error
        }
        // Plain index loops, and nothing at all without feedbacks: in this
        // unspecialized generic code, `enumerated()`, `zip` and `dropFirst()`
        // each cost generic-metadata lookups per start.
        if spin.hasFeedbacks { makeWorkers(spin.feedbacks) }
        // The first slice delivers the initial state. With no feedback, no
        // observer and no `states` subscriber (one made before start, as
        // `spin.stream()` does) to deliver it to, the loop starts idle instead: a million
        // loops started at once cost no million schedulings. Stored before
        // any other thread can see the loop (no emit can have come yet).
        let firstSliceHasWork = hasInlineWorkers || hasLatestInlineWorkers || hasQueuedWorkers
            || hub != nil || observersPending
        if !firstSliceHasWork {
            started = true
            schedulingState.store(.idle, ordering: .sequentiallyConsistent)
        }
        // Attached before the first slice: gear events sent right after
        // start() are queued, not missed (an idle loop is woken by them).
        if let workers {
            for worker in workers.attached { worker.attach() }
        }
        if firstSliceHasWork { scheduleFirstRun() }
    }

    /// Finishes a loop that will never run (its executor refused it, or its
    /// options are invalid): every emit answers `.stopped`, `stop` returns
    /// at once with nothing reduced. Called before any other thread sees it.
    func finishUnstarted() {
        closed.store(true, ordering: .sequentiallyConsistent)
        _ = stopRequest.compareExchange(expected: .none, desired: .drain, ordering: .sequentiallyConsistent)
        schedulingState.store(.finished, ordering: .sequentiallyConsistent)
        complete(with: StopReport(reduced: 0, discarded: 0), finalState: state)
    }

    private func makeWorkers(_ feedbacks: [Feedback<State, Event>]) {
        // Made only for queued or attached workers: the inline ones (the
        // default placement) are held by their chains, and a loop per
        // connection should not pay an object and an array for them.
        var workers: LoopWorkers<State, Event>?
        var lastInline: FeedbackWorker<State, Event>?
        var lastLatestInline: FeedbackWorker<State, Event>?
        for index in 0..<feedbacks.count {
            let feedback = feedbacks[index]
            let worker = FeedbackWorker(index: index, feedback: feedback, core: self)
            if case .attached = feedback.effect {
                if workers == nil { workers = LoopWorkers() }
                workers!.attached.append(worker)
            } else if worker.queue == nil {
                if worker.takesLatestOnly {
                    if let lastLatestInline { lastLatestInline.runnerOwned.nextInline = worker } else { firstLatestInlineWorker = worker }
                    lastLatestInline = worker
                } else {
                    if let lastInline { lastInline.runnerOwned.nextInline = worker } else { firstInlineWorker = worker }
                    lastInline = worker
                }
            } else {
                if workers == nil { workers = LoopWorkers() }
                workers!.queued.append(worker)
                if !worker.takesLatestOnly { hasEveryStateQueuedWorkers = true }
            }
        }
        hasQueuedWorkers = !(workers?.queued.isEmpty ?? true)
        hasInlineWorkers = firstInlineWorker != nil
        hasLatestInlineWorkers = firstLatestInlineWorker != nil
        self.workers = workers
    }

    override var budget: Int { options.maxBatch }

    /// The loop's serial queue when it runs on one (`executeOn:`, or
    /// `SpinExecutor.queue`): where effects that name no queue run.
    var executorQueue: DispatchQueue? { (executor as? QueueExecutor)?.queue }

    /// The `states` subscribers if any subscription was ever made, else nil.
    /// Any thread.
    @inline(__always)
    var observers: StateObservers<State>? {
        words.observersCreated.load(ordering: .acquiring) ? observerStorage : nil
    }

    /// True while a new subscriber waits for its first state. Any thread.
    @inline(__always)
    var observersPending: Bool {
        words.observersCreated.load(ordering: .acquiring)
            && observerStorage!.hasPending.load(ordering: .relaxed)
    }

    /// Subscriptions that still receive states. Any thread.
    var stateSubscriberCount: Int {
        completion.withLock { _ in observerStorage }?.count ?? 0
    }

    /// A new `states` stream (creating the subscribers on first use). On a
    /// stopped loop it yields the final state and ends. Any thread.
    func subscribeStates(limit: Int = .max) -> SpinStates<State> {
        let (observers, finished) = completion.withLock { completion -> (StateObservers<State>, Bool) in
            if observerStorage == nil {
                observerStorage = StateObservers<State>()
                words.observersCreated.store(true, ordering: .releasing)
            }
            return (observerStorage!, completion.report != nil)
        }
        // Finished before the subscribers existed: end them here (`complete`
        // ends them when they existed first; the lock orders the two). The
        // final state is the snapshot's: published before the report.
        if finished { observers.finish(final: snapshot.value(as: State.self)) }
        return observers.subscribe(limit: limit) { [self] in wake() }
    }

    // The scheduling protocol's hooks (see ScheduledLoop); the bodies are in
    // LoopCore+Slice.swift and LoopCore+Stop.swift.
    override func runSlice(budget: Int) -> SliceOutcome {
        // One relaxed load of the loop's words per slice (see LoopCore+Settle.swift).
        if words.settlePending.load(ordering: .relaxed) || !settling.isEmpty {
            return sliceSettling(budget: budget)
        }
        return slice(budget: budget)
    }
    override func hasVisibleWork() -> Bool { visibleWork }
    override func runnerSeesWork() -> Bool { runnerWork }
    override func idleCostsFence() -> Bool { laneSet.map { spindle_lane_set_count_consumer($0) > 0 } ?? false }
    override func requestStopForShutdown() { requestStop(.drain) }
    override func gracePeriodEnded() { graceEnded() }

    /// Crashes in debug builds when called outside a slice of this loop
    /// (swift-nio's `assertInEventLoop`): called at every door into
    /// runner-only code — `slice` and each runner-only method other code
    /// calls (the queue's consumer side, the feedback workers' runner side)
    /// — so a label that drifted from the code fails the first test that
    /// takes the path. The slice's private helpers are reached only through
    /// `slice`. Free in release builds.
    @inline(__always)
    func assertOnRunner() {
        assert(isOnRunner, "Spindle: runner-only code ran outside the loop's slice")
    }

    // MARK: Emitting

    /// Accepts `event` for reduction, or says why not. Any thread. (An emit
    /// on the calling thread's lane usually never gets here:
    /// `SpinLoop.emit` takes its inlined lane fast path first.)
    @usableFromInline
    func emit(_ event: Event) -> EmitResult {
        if isOnRunner { return emitOnRunner(event) }
        if queueTag == .lockFree {
            var shouldOpen = false
            if let lane = spindle_lane_lookup(loopID, Lanes.streak, &shouldOpen) {
                if let result = emitOnLane(lane, event) { return result }
            } else if shouldOpen {
                let result = emitThroughGate(event)
                if result == .accepted { openLane() }
                return result
            }
        }
        return emitThroughGate(event)
    }

    /// An emit that never takes a lane: effect runs and effect routes,
    /// whose emits may come from different threads one after the other (a
    /// task that hops threads, a serial queue's work items) and must still
    /// be reduced in order — which the shared queue's linearizable enqueue
    /// keeps and per-thread lanes would not (LANES.md). Any thread.
    func emitInOrderAcrossThreads(_ event: Event) -> EmitResult {
        if isOnRunner { return emitOnRunner(event) }
        return emitThroughGate(event)
    }

    /// Counts a scheduling that an emit runs on the loop's own executor
    /// (`SpinLoop.runsInPlace`). Only the emit that took the loop calls it,
    /// so a load and a store, no read-modify-write.
    @inline(__always)
    func countRunInPlace(_ counter: UnsafeAtomic<Int>) {
        counter.store(counter.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }

    /// An emit through the gate and the shared queue (or ring). Any thread
    /// but the runner.
    @inline(__always)
    private func emitThroughGate(_ event: Event) -> EmitResult {
        spindle_gate_enter()
        // Relaxed: the grace period orders stop's store against this load.
        if closed.load(ordering: .relaxed) {
            spindle_gate_exit()
            return rejectAfterStop(event)
        }
        if executorMayRunHere, queueLooksEmpty, takeToRunHere() {
            // The direct path: this thread found the shared queue empty and
            // took the idle loop on its own executor, so it is the runner.
            // The event skips the shared queue: it waits in the runner's own
            // queue and is reduced in the first slice, which this thread
            // runs once it has left its gate section. The queue must be
            // empty: a slice reduces at most a budget of its events before
            // the runner's own, and an older event of this thread must not
            // be overtaken. An event enqueued after the check comes from an
            // emit concurrent with this one: either order is an order the
            // contract allows (PROTOCOL.md, the direct path). A loop found
            // idle is not streaming: no lane for this thread yet.
            if queueTag == .lockFree { spindle_lane_reset_streak(loopID) }
            reentrant.append(event)
            spindle_gate_exit()
            if let hub { accepted(event, hub: hub) }
            countRunInPlace(counters.directRuns)
            runTakenHere()
            return .accepted
        }
        let enqueued = tryEnqueueAndWake(event, emitterMayRun: true)
        if enqueued != .full {
            spindle_gate_exit()
            if let hub { accepted(event, hub: hub) }
            if enqueued == .runHere {
                countRunInPlace(counters.inlineRuns)
                runHere()
            }
            return .accepted
        }
        let result = overflow(event)
        spindle_gate_exit()
        // Observers hear of it outside the gate section (contract 9).
        if let hub { report(result, of: event, to: hub) }
        return result
    }

    /// Accepts a batch: on the default queue with one gate section, one
    /// pool CAS and one tail exchange per 128 events, and one wake; on a
    /// bounded queue with one claim per run of free slots. Any thread. The
    /// accepted events are a prefix of the batch, in order (see
    /// ``EmitBatchResult``).
    func emit(contentsOf events: UnsafeBufferPointer<Event>) -> EmitBatchResult {
        if events.isEmpty { return EmitBatchResult(accepted: 0, dropped: 0, stopped: 0) }
        if isOnRunner { return emitOnRunner(contentsOf: events) }
        if queueTag == .lockFree {
            var shouldOpen = false
            if let lane = spindle_lane_lookup(loopID, Lanes.streak, &shouldOpen) {
                if let result = emitOnLane(lane, contentsOf: events) { return result }
            } else if shouldOpen {
                let result = emitThroughGate(contentsOf: events)
                if result.accepted == events.count { openLane() }
                return result
            }
        }
        return emitThroughGate(contentsOf: events)
    }

    /// A batch through the gate and the shared queue (or ring).
    func emitThroughGate(contentsOf events: UnsafeBufferPointer<Event>) -> EmitBatchResult {
        spindle_gate_enter()
        if closed.load(ordering: .relaxed) {
            spindle_gate_exit()
            return rejectAfterStop(events[...])
        }
        let woke: WakeOutcome
        switch queueTag {
        case .lockFree:
            lockFreeQueue!.enqueue(contentsOf: events)
            // After the tail exchange, a full barrier (see tryEnqueueAndWake).
            woke = wake(emitterMayRun: true)
            spindle_gate_exit()
        case .baseline:
            baselineQueue!.enqueue(contentsOf: events)
            atomicMemoryFence(ordering: .sequentiallyConsistent)
            woke = wake(emitterMayRun: true)
            spindle_gate_exit()
        case .ring:
            return emitToRing(contentsOf: events)
        }
        if let hub { for event in events { accepted(event, hub: hub) } }
        if woke == .runHere { runHere() }
        return EmitBatchResult(accepted: events.count, dropped: 0, stopped: 0)
    }

    // The bounded queue's batch: claim what is free, then apply the policy
    // to the rest. Called inside the emit's gate section; leaves it.
    // Observers hear of each part of the batch after the section is left
    // (contract 9): the accepted prefix, then the dropped or rejected rest.
    private func emitToRing(contentsOf events: UnsafeBufferPointer<Event>) -> EmitBatchResult {
        let ring = ringQueue!
        var accepted = 0
        var result: EmitBatchResult
        // Only a batch that fits at once may run the loop here: a `.block`
        // batch that waits for room needs another thread to make it.
        var runsHere = false
        while true {
            let remaining = UnsafeBufferPointer(rebasing: events[accepted...])
            let claimed = ring.tryEnqueue(contentsOf: remaining)
            if claimed > 0 {
                if wake(emitterMayRun: claimed == events.count) == .runHere { runsHere = true }
                accepted += claimed
            }
            if accepted == events.count {
                spindle_gate_exit()
                result = EmitBatchResult(accepted: accepted, dropped: 0, stopped: 0)
                break
            }
            guard case .bounded(_, .block) = options.queue else {
                // .dropNewest: the rest of the batch is dropped.
                spindle_gate_exit()
                counters.dropped.wrappingIncrement(by: events.count - accepted, ordering: .relaxed)
                result = EmitBatchResult(accepted: accepted, dropped: events.count - accepted, stopped: 0)
                break
            }
            // .block: wait, then claim again, unless the loop closed meanwhile.
            guard waitForSpaceOutsideGate() else {
                spindle_gate_exit()
                counters.rejectedAfterStop.wrappingIncrement(by: events.count - accepted, ordering: .relaxed)
                result = EmitBatchResult(accepted: accepted, dropped: 0, stopped: events.count - accepted)
                break
            }
        }
        if let hub {
            for event in events.prefix(accepted) { self.accepted(event, hub: hub) }
            for event in events[accepted...] {
                if result.dropped > 0 { hub.eventDropped(event) } else { hub.eventRejected(event) }
            }
        }
        if runsHere { runHere() }
        return result
    }

    // The runner's own batch goes to its local deque, as single emits do.
    private func emitOnRunner(contentsOf events: UnsafeBufferPointer<Event>) -> EmitBatchResult {
        if closed.load(ordering: .relaxed) { return rejectAfterStop(events[...]) }
        for event in events {
            reentrant.append(event)
            if let hub { accepted(event, hub: hub) }
        }
        return EmitBatchResult(accepted: events.count, dropped: 0, stopped: 0)
    }

    private func rejectAfterStop(_ events: Slice<UnsafeBufferPointer<Event>>) -> EmitBatchResult {
        counters.rejectedAfterStop.wrappingIncrement(by: events.count, ordering: .relaxed)
        if let hub { for event in events { hub.eventRejected(event) } }
        return EmitBatchResult(accepted: 0, dropped: 0, stopped: events.count)
    }

    // An observed loop's accepted event: counted for the queue depth, and
    // reported to the per-event observers.
    func accepted(_ event: Event, hub: ObserverHub<State, Event>) {
        acceptedCount.wrappingIncrement(ordering: .relaxed)
        if hub.wantsEachEvent { hub.eventAccepted(event) }
    }

    func rejectAfterStop(_ event: Event) -> EmitResult {
        counters.rejectedAfterStop.wrappingIncrement(ordering: .relaxed)
        hub?.eventRejected(event)
        return .stopped
    }

    /// Tells the observers what an emit did with `event`. Called with no
    /// lock held and outside every gate section (contract 9).
    func report(_ result: EmitResult, of event: Event, to hub: ObserverHub<State, Event>) {
        switch result {
        case .accepted: accepted(event, hub: hub)
        case .dropped: hub.eventDropped(event)
        case .stopped: hub.eventRejected(event)
        }
    }

    /// An emit from an effect: false (and counted) unless accepted.
    @discardableResult
    func emitFromEffect(_ event: Event) -> Bool {
        emitInOrderAcrossThreads(event) == .accepted
    }

    // The runner never waits on its own queue: its events go to a local
    // deque reduced before the next batch, so a full bounded queue cannot
    // deadlock it.
    private func emitOnRunner(_ event: Event) -> EmitResult {
        if closed.load(ordering: .relaxed) { return rejectAfterStop(event) }
        reentrant.append(event)
        if let hub { accepted(event, hub: hub) }
        return .accepted
    }

    // A bounded queue is full: apply its policy. Called inside the emit's
    // gate section, and returns inside one; counts, but leaves the
    // observers to the caller, outside the section.
    private func overflow(_ event: Event) -> EmitResult {
        guard case .bounded(_, let policy) = options.queue, let ring = ringQueue else {
            preconditionFailure("Spindle: only a bounded queue can be full")
        }
        switch policy {
        case .dropNewest:
            counters.dropped.wrappingIncrement(ordering: .relaxed)
            return .dropped
        case .block:
            while true {
                guard waitForSpaceOutsideGate() else {
                    counters.rejectedAfterStop.wrappingIncrement(ordering: .relaxed)
                    return .stopped
                }
                if ring.tryEnqueue(event) {
                    wake()
                    return .accepted
                }
            }
        }
    }

    /// A `.block` emit's wait for space, called inside its gate section:
    /// leaves the section while it waits (the grace period must not wait
    /// for a producer that waits for the runner), re-enters it, and answers
    /// whether the loop is still open. Returns inside the section.
    private func waitForSpaceOutsideGate() -> Bool {
        spindle_gate_exit()
        waitForSpace()
        spindle_gate_enter()
        return !closed.load(ordering: .relaxed)
    }

    /// Waits (outside any gate section and any lock) until the bounded
    /// queue has space or the loop is closed. Wake-ups come from the runner
    /// releasing slots, and from stop; the timeout is a safety net, not the
    /// mechanism.
    ///
    /// On a pool thread (a feedback on its loop's executor emitting into
    /// this loop), the pool is told first, so that it keeps a thread free to
    /// run this loop (see `PoolCore.threadWillBlock`).
    func waitForSpace() {
        guard let ring = ringQueue else { return }
        let pool = PoolCore.current
        pool?.threadWillBlock()
        ring.spaceParker.wait(spins: 200, timeoutNanoseconds: 1_000_000) { [closed] in
            ring.depth < ring.capacity || closed.load(ordering: .relaxed)
        }
        pool?.threadDidUnblock()
    }

    /// `waitForSpace()` for a task: suspends instead of blocking its thread
    /// (which may be a cooperative thread that other tasks need).
    func waitForSpaceSuspending() async {
        guard let ring = ringQueue else { return }
        await ring.asyncSpaceWaiters.wait { [closed] in
            ring.depth < ring.capacity || closed.load(ordering: .relaxed)
        }
    }

    /// An emit that never waits and tells no observer, for effect runs
    /// that hold a lock: `.full` instead of waiting when a `.block` bounded
    /// queue is full (the caller waits with `waitForSpace()` after releasing
    /// its lock, then retries). Counts as every emit does; the caller hands
    /// the answer to ``report(_:of:to:)`` once its lock is released.
    func emitUnreportedWithoutWaiting(_ event: Event) -> EmitAttempt {
        if isOnRunner {
            if closed.load(ordering: .relaxed) {
                counters.rejectedAfterStop.wrappingIncrement(ordering: .relaxed)
                return .stopped
            }
            reentrant.append(event)
            return .accepted
        }
        spindle_gate_enter()
        defer { spindle_gate_exit() }
        if closed.load(ordering: .relaxed) {
            counters.rejectedAfterStop.wrappingIncrement(ordering: .relaxed)
            return .stopped
        }
        // The default queue is never full: its enqueue never fails. (Never
        // run here: an effect run's emit holds its lock.)
        if tryEnqueueAndWake(event, emitterMayRun: false) != .full { return .accepted }
        if case .bounded(_, .dropNewest) = options.queue {
            counters.dropped.wrappingIncrement(ordering: .relaxed)
            return .dropped
        }
        return .full
    }

    // MARK: The queue

    /// Enqueues and schedules the loop if it is idle; `.full` when the ring
    /// is full. With `emitterMayRun`, the answer may be `.runHere` (see
    /// `wake(emitterMayRun:)`): the caller then runs the loop once it has
    /// left its gate section.
    @inline(__always)
    func tryEnqueueAndWake(_ event: Event, emitterMayRun: Bool) -> EnqueueOutcome {
        switch queueTag {
        case .lockFree:
            lockFreeQueue!.tryEnqueue(event)
            // The wfcqueue enqueue is an xchg, a full barrier: no fence needed
            // before `wake` reads the scheduling state (the Dekker pair).
            // A loop found idle is not streaming: no lane for this thread yet.
            let woke = wake(emitterMayRun: emitterMayRun)
            if woke != .notScheduled { spindle_lane_reset_streak(loopID) }
            return woke == .runHere ? .runHere : .enqueued
        case .ring:
            guard ringQueue!.tryEnqueue(event) else { return .full }
            // The ring's claim is a seq_cst RMW on its tail, which the runner
            // re-checks (depth) after going idle; a runner scheduled before
            // the publish lands finds a run of 0 and re-checks again.
            return wake(emitterMayRun: emitterMayRun) == .runHere ? .runHere : .enqueued
        case .baseline:
            baselineQueue!.tryEnqueue(event)
            // A mutex unlock is only a release: fence before reading the state.
            atomicMemoryFence(ordering: .sequentiallyConsistent)
            return wake(emitterMayRun: emitterMayRun) == .runHere ? .runHere : .enqueued
        }
    }

    /// Runner only.
    @inline(__always)
    func drainQueue(max: Int, _ body: (UnsafeMutableRawPointer) -> Void) -> Int {
        drainQueue(max: max, body) { first, count in
            var payload = first
            for _ in 0..<count {
                body(payload)
                payload += MemoryLayout<Event>.stride
            }
        }
    }

    /// `drainQueue`, with the lanes' events handed over a run at a time:
    /// `runs(first, count)` moves out `count` adjacent payloads
    /// (`MemoryLayout<Event>.stride` apart). Runner only.
    @inline(__always)
    func drainQueue(
        max: Int, _ body: (UnsafeMutableRawPointer) -> Void, runs: (UnsafeMutableRawPointer, Int) -> Void
    ) -> Int {
        assertOnRunner()
        switch queueTag {
        case .lockFree:
            // The shared queue first (its markers open lanes), then the lanes.
            let shared = lockFreeQueue!.drain(max: max, body) { lane in laneOpened(lane) }
            if shared == max { return shared }
            return shared + drainLanes(max: max - shared, runs)
        case .ring:
            // Every-state inline feedbacks and observer hooks run inside
            // `body`, and may block (see `RingQueue.drain`).
            return ringQueue!.drain(max: max, bodyMayBlock: hasInlineWorkers || hub != nil, body)
        case .baseline: return baselineQueue!.drain(max: max, body)
        }
    }

    /// Whether the queue looks empty to a thread that is not its consumer
    /// (the runner's re-check after going idle, when another runner may
    /// already own the queue): reads only what producers write.
    var queueLooksEmpty: Bool {
        switch queueTag {
        case .lockFree: lockFreeQueue!.looksEmpty && !lanesLookRunnable
        case .ring: ringQueue!.isEmpty
        case .baseline: baselineQueue!.looksEmpty
        }
    }

    /// Runner only (reads the consumer's private batch).
    var queueIsEmpty: Bool {
        assertOnRunner()
        return switch queueTag {
        case .lockFree: lockFreeQueue!.isEmpty && !lanesLookRunnable
        case .ring: ringQueue!.isEmpty
        case .baseline: baselineQueue!.isEmpty
        }
    }

    /// Reports an effect's error to the hook (or the logger). Any thread.
    func report(_ error: EffectError) {
        Self.report(error, options: options, counters: counters, source: "effect of feedback \(error.feedbackIndex) threw")
    }

    /// Counts `error` and hands it to `options.onEffectError`, or logs it as
    /// "<source>: <error>". Any thread; needs no loop, so work that outlives
    /// its loop (an effect router's handler) can still report.
    static func report(_ error: EffectError, options: SpinOptions, counters: LoopCounters, source: String) {
        counters.effectErrors.wrappingIncrement(ordering: .relaxed)
        if let hook = options.onEffectError {
            hook(error)
        } else {
            options.logger.error("\(source): \(String(describing: error.underlying))")
        }
    }

    // MARK: Stopping: see LoopCore+Stop.swift
}

/// A loop's feedback workers, by where they run (see `LoopCore.workers`).
/// Runner only, like the fields of `LoopCore` that hold it.
final class LoopWorkers<State: Sendable, Event: Sendable> {
    /// Feedbacks with a queue of their own: states are handed over in batches.
    var queued: [FeedbackWorker<State, Event>] = []
    /// Gear feedbacks, attached at start.
    var attached: [FeedbackWorker<State, Event>] = []
}

/// A loop's end, once it came (see `LoopCore.completion`). Not generic on
/// purpose: the lock around it is created at every start, and a generic
/// type there costs a metadata lookup each time.
struct LoopCompletion {
    var report: StopReport?
    var waiters: [CheckedContinuation<StopReport, Never>] = []
    /// `settled()` calls not yet taken by the runner (see LoopCore+Settle.swift).
    var settleWaiters: [CheckedContinuation<Void, Never>] = []
}

/// What `LoopCore.tryEnqueueAndWake` did.
enum EnqueueOutcome {
    /// Enqueued (the loop scheduled if it was idle).
    case enqueued
    /// Enqueued, and the loop woken for the caller to run (`runHere()`).
    case runHere
    /// A bounded queue is full: nothing enqueued.
    case full
}

/// The answer of `LoopCore.emitWithoutWaiting`.
enum EmitAttempt {
    case accepted, dropped, stopped
    /// A `.block` bounded queue is full: wait for space, then try again.
    case full

    init(_ result: EmitResult) {
        switch result {
        case .accepted: self = .accepted
        case .dropped: self = .dropped
        case .stopped: self = .stopped
        }
    }
}

/// Which of a loop's three queue slots is in use.
enum QueueTag: UInt8, Sendable {
    case lockFree, ring, baseline
}
