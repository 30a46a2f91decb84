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
    // The stored properties' order is their layout (a class's fields are
    // laid out as declared): a request through an idle loop (a server's
    // connection, cold since its last request) loads each line it touches,
    // so what every emit and slice reads comes first and together, right
    // after `ScheduledLoop`'s 72 bytes: the queue's kind, the state's, the
    // reducer's, the queue's and the snapshot's references, the checks'
    // (observers, gate, bound) and the budget, then the runner's own fields
    // (`RunnerOwned`, its hot ones first). What only a start, a stop, an
    // observer, a drop, a lane's run or a custom queue reads comes after
    // the runner's fields, whose size depends on `State` (their offsets
    // are then read from the class's metadata: slower, and only off the
    // hot path).

    /// Which of the queues below is the loop's (see them). First: one byte,
    /// which fits the padding after `ScheduledLoop`'s last field.
    let queueTag: QueueTag
    /// The loop's identity in the threads' lane tables: never reused. Near
    /// the start, with the other fields a producer's emit reads (the
    /// queue's kind, the observers), and away from the runner's fields,
    /// which the runner writes at every event: sharing a line with them
    /// would cost each emit a transfer of that line from the runner's core.
    let loopID: UInt64
    // runner only: the running state, and `runner` below (the batch, events
    // emitted on the runner itself, the counts, the inline chains).
    // The state lives behind a pointer, not in a stored property: the reducer
    // passes `statePointer.pointee` to the user's reducer by address, where a
    // generic class property is first copied out (a value-witness call per
    // event, the reducer's largest cost in reduce-1p). It points into the
    // snapshot's allocation, beside the boxes a batch publishes it to.
    let statePointer: UnsafeMutablePointer<State>
    /// The reducer's function, stored directly so that the per-event path
    /// loads it without generic field-offset lookups.
    let reduceFunction: @Sendable (inout State, UnsafeMutableRawPointer) -> Void
    // The event queue, concretely typed (an existential would stop the
    // compiler from calling its methods directly): exactly one is non-nil,
    // named by `queueTag`. Unwrapped with `!` (a branch), not
    // `unsafelyUnwrapped`: that is a generic stdlib call in debug builds.
    let lockFreeQueue: LockFreeQueue<Event>?
    let snapshot: StateSnapshot<State>
    /// The spin's observers (see ``SpinObserver``); nil when it has none,
    /// which keeps every observer call off the engine's paths.
    let hub: ObserverHub<State, Event>?
    /// The gate on the loop's reductions, for a consumer with demand (see
    /// ``ReductionGate``); nil for nearly every loop. Written once, by the
    /// start's `beforeStart`, before the loop's first scheduling (which
    /// publishes it to the runner) and before any other thread sees the
    /// loop; only read after that, which is why it is `nonisolated(unsafe)`.
    nonisolated(unsafe) var reductionGate: ReductionGate<State>?
    /// `options.maxBatch`, kept beside the fields every slice reads.
    let maxBatch: Int
    /// What bounds the default queue of a `.bounded` loop; nil for an
    /// unbounded one.
    let bound: BoundedAdmission?
    /// The queued and attached feedback workers; nil for a loop with
    /// neither (empty arrays of a generic element type would cost this
    /// unspecialized code metadata lookups at every start). The inline ones
    /// are held by their chains (`RunnerOwned.firstInlineWorker`, `firstLatestInlineWorker`).
    var workers: LoopWorkers<State, Event>?
    /// The runner's own emits go on to the custom queue at the end of each
    /// slice's reductions instead of being reduced in it: a loop under a
    /// ``ManualDrive`` (SpindleTesting's runner; see `moveReentrantToQueue`).
    let runnerEmitsThroughQueue: Bool
    /// Everything only the loop's runner touches (see `RunnerOwned`). Reach
    /// it through `runner`, which checks the thread in debug builds; directly
    /// only before the loop's first scheduling (its start, which publishes
    /// what it stores to the first runner).
    @exclusivity(unchecked) var unsafeRunnerOwned: RunnerOwned
    // What the in-place path never reads, after the runner's fields (their
    // offsets then come from the class's metadata, a load per use): the
    // counters of drops and refusals, the reducer over a lane's runs (once
    // per run of events, not per event), the custom queue's calls.
    let counters = LoopCounters()
    /// The reducer over a run of adjacent events (`Reducer.reduceRunInPlace`),
    /// for a lane's runs; nil for a reducer with effects.
    let reduceRunFunction: (@Sendable (inout State, UnsafeMutableRawPointer, Int) -> Void)?
    /// `customQueue`, unretained (it keeps it): see `withCustomQueue`.
    let customCalls: Unmanaged<CustomQueueCalls<Event>>?
    /// A queue made outside the engine (`QueueKind.custom`), reached
    /// through its protocol.
    let customQueue: CustomQueueCalls<Event>?
    /// The `states` subscribers, created by the first subscription (most
    /// loops never have one): written once under `completion`'s lock before
    /// `words.observersCreated` is set (release); read after that flag.
    nonisolated(unsafe) private var observerStorage: StateObservers<State>?
    // protected by lock: the final report and the stop calls waiting for it.
    let completion = Lock(LoopCompletion())
    let options: SpinOptions

    var state: State {
        @inline(__always) get { statePointer.pointee }
    }
    /// The lanes the runner reads (default queue only; see
    /// LoopCore+Lanes.swift): changed by the runner, scanned by any thread
    /// under the gate. In the words' allocation; the C set follows its own
    /// table.
    var laneSet: OpaquePointer? {
        @inline(__always) get { queueTag == .lockFree ? OpaquePointer(words.laneSetMemory) : nil }
    }
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

    /// The runner-only state, checked (swift-nio's `NIOLoopBound`): in debug
    /// builds every access off the loop's runner crashes; in release builds
    /// it is the stored property itself.
    var runner: RunnerOwned {
        @inline(__always) _read {
            assertOnRunner()
            yield unsafeRunnerOwned
        }
        @inline(__always) _modify {
            assertOnRunner()
            yield &unsafeRunnerOwned
        }
    }

    /// Everything in a loop that no lock guards and only its runner touches,
    /// in one place: the state's batch, events emitted on the runner itself,
    /// the counts, the inline feedback chains and their flags. One runner at
    /// a time (the scheduling CAS orders consecutive runners), so no access
    /// overlaps another thread's; hence `@exclusivity(unchecked)` on the
    /// property, as the dynamic checks, a thread-local lookup per access on
    /// the reducer's path, would prove nothing. Raw buffers and scalars
    /// rather than Array, Deque or tuples (see RawFIFO); the fixed-size
    /// fields first, so their offsets are static in this generic struct, and
    /// the one-byte flags together (apart, each cost a word of padding, and
    /// the core's size decides its allocation's size class). What a slice
    /// reads for every event (the flags, the inline chain, the counts, the
    /// runner's own queue) comes first: one line.
    struct RunnerOwned: ~Copyable {
        /// Whether the first slice (the initial state's delivery) has run.
        var started = false
        /// Whether the current batch collects each state (for feedbacks or observers).
        var collecting = false
        var hasQueuedWorkers = false
        /// Whether a queued worker takes every state (the batch's states must
        /// then be collected); queued workers that take the latest get `state`.
        var hasEveryStateQueuedWorkers = false
        /// Whether `firstInlineWorker` is set (inline workers run after each reduction).
        var hasInlineWorkers = false
        /// Whether `firstLatestInlineWorker` is set.
        var hasLatestInlineWorkers = false
        /// The inline workers, linked through `FeedbackWorker.nextInline`
        /// (set at start): the per-reduction walk follows class references,
        /// where iterating the array in this unspecialized generic code asked
        /// the runtime for generic metadata on every reduction.
        var firstInlineWorker: FeedbackWorker<State, Event>?
        var reducedCount = 0
        /// Where waiting `states` observers start in this batch: they get
        /// `observerBaseState` first, then `batchStates[observerBaseIndex...]`.
        /// -1: no observer waiting.
        var observerBaseIndex = -1
        var reentrant = RawFIFO<Event>()
        /// The inline workers that take only the latest state
        /// (`StateDelivery.latestState`), linked the same way: they run once
        /// per batch, in `publish`, not after each reduction.
        var firstLatestInlineWorker: FeedbackWorker<State, Event>?
        var batchStates = RawBatch<State>()
        var discardedCount = 0
        /// The `settled()` calls the runner took at the start of a slice:
        /// resumed once a slice ends with the queue empty (LoopCore+Settle.swift).
        var settling: [CheckedContinuation<Void, Never>] = []
        /// The state the waiting `states` observers start from (see
        /// `observerBaseIndex`). Last: its size depends on `State`.
        var observerBaseState: State
    }

    /// Creates a loop to run on `executor` (started by `start(spin:)`).
    init(spin: Spin<State, Event>, options: SpinOptions, executor: any LoopExecutor) {
        self.options = options
        maxBatch = options.maxBatch
        self.reduceFunction = spin.reducer.reduceInPlace
        self.reduceRunFunction = spin.reducer.reduceRunInPlace
        let snapshot = StateSnapshot(spin.initialState)
        self.snapshot = snapshot
        statePointer = snapshot.runningState
        unsafeRunnerOwned = RunnerOwned(observerBaseState: spin.initialState)
        // Checked here, not by the hub's failable init: in this unspecialized
        // generic code, calling it (or counting the array) costs metadata
        // lookups per start.
        self.hub = spin.hasObservers ? ObserverHub(spin.observers) : nil
        var lockFree: LockFreeQueue<Event>?
        var bound: BoundedAdmission?
        var custom: CustomQueueCalls<Event>?
        switch options.queue {
        case .lockFree:
            queueTag = .lockFree
            lockFree = LockFreeQueue<Event>()
        case .bounded(let capacity, let policy):
            // The default queue, lanes and all, with admission control.
            queueTag = .lockFree
            lockFree = LockFreeQueue<Event>()
            bound = BoundedAdmission(capacity: capacity, policy: policy)
        case .custom(let factory):
            queueTag = .custom
            // The start checked the queue's event type (`invalidity(for:)`):
            // a loop whose options are invalid is built on the default queue.
            guard let queue = factory.makeQueue(of: Event.self) else {
                preconditionFailure("Spindle: a custom queue of another event type reached a loop")
            }
            custom = queue
        }
        lockFreeQueue = lockFree
        self.bound = bound
        customQueue = custom
        customCalls = custom.map { Unmanaged.passUnretained($0) }
        runnerEmitsThroughQueue = custom != nil && options.executor?.manualDrive != nil
        loopID = Lanes.nextLoopID()
        super.init(executor: executor)
        if queueTag == .lockFree { spindle_lane_set_init(words.laneSetMemory) }
        LiveCounts.loops.wrappingIncrement(ordering: .relaxed)
    }

    deinit {
        // A marker still queued: its lane's thread frees it (ORPHANED).
        lockFreeQueue?.discardAll { _ = spindle_lane_release_loop($0) }
        releaseLanes()
        // Last, as the released properties would have freed it before.
        lockFreeQueue?.destroy()
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
            finishUnstarted(error)
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
        let firstSliceHasWork = unsafeRunnerOwned.hasInlineWorkers || unsafeRunnerOwned.hasLatestInlineWorkers
            || unsafeRunnerOwned.hasQueuedWorkers || hub != nil || observersPending
        if !firstSliceHasWork {
            unsafeRunnerOwned.started = true
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
    func finishUnstarted(_ error: SpinExecutorError) {
        hub?.loopFailedToStart(error)
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
                    if let lastLatestInline { lastLatestInline.nextInline = worker } else { unsafeRunnerOwned.firstLatestInlineWorker = worker }
                    lastLatestInline = worker
                } else {
                    if let lastInline { lastInline.nextInline = worker } else { unsafeRunnerOwned.firstInlineWorker = worker }
                    lastInline = worker
                }
            } else {
                if workers == nil { workers = LoopWorkers() }
                workers!.queued.append(worker)
                if !worker.takesLatestOnly { unsafeRunnerOwned.hasEveryStateQueuedWorkers = true }
            }
        }
        // Before the first scheduling (see `unsafeRunnerOwned`).
        unsafeRunnerOwned.hasQueuedWorkers = !(workers?.queued.isEmpty ?? true)
        unsafeRunnerOwned.hasInlineWorkers = unsafeRunnerOwned.firstInlineWorker != nil
        unsafeRunnerOwned.hasLatestInlineWorkers = unsafeRunnerOwned.firstLatestInlineWorker != nil
        self.workers = workers
    }

    override var budget: Int { maxBatch }

    /// The loop's serial queue when it runs on one (`SpinExecutor.queue`):
    /// where effects that name no queue run. Read from the options, as the
    /// start read it for the effect routes (`PreparedSpin`).
    var executorQueue: DispatchQueue? { options.executor?.serialQueue }

    /// SpindleTesting's runner's hooks, when it drives this loop.
    var manualDrive: ManualDrive? { options.executor?.manualDrive }

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

    /// Whether a `states` observer keeps more than the latest state, so
    /// that each state of a batch must be collected for it.
    var observersNeedEveryState: Bool {
        observers?.needsEveryState.load(ordering: .relaxed) ?? false
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
        if finished { observers.finish(final: snapshot.value()) }
        return observers.subscribe(limit: limit) { [self] in wake() }
    }

    // The scheduling protocol's hooks (see ScheduledLoop); the bodies are in
    // LoopCore+Slice.swift and LoopCore+Stop.swift.
    override func runSlice(budget: Int) -> SliceOutcome {
        // One relaxed load of the loop's words per slice (see LoopCore+Settle.swift).
        if words.settlePending.load(ordering: .relaxed) || !runner.settling.isEmpty {
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

    // Emitting: LoopCore+Emit.swift. The queue: LoopCore+Queue.swift.

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

/// Which of a loop's two queue slots is in use.
enum QueueTag: UInt8, Sendable {
    case lockFree, custom
}
