import CSpindle
import Atomics
import Dispatch

/// The engine behind a ``SpinLoop``: the gate that decides what `emit`
/// accepts, the event queue, the reducer thread and the feedback workers.
///
/// The gate: every emit runs inside an RCU read-side section (liburcu's
/// urcu-bp, `spindle_gate_enter`/`exit`): it reads `closed` and, if the loop
/// is open, enqueues before leaving the section. Stop sets `closed`; the
/// reducer then waits for a grace period (`spindle_gate_wait_for_emitters`),
/// after which every emit that missed `closed` has enqueued and every later
/// one sees it. So an emit either answers `.stopped` or its event is in the
/// queue before the final drain: nothing accepted is lost. The section costs
/// a thread-local store (urcu-bp moves the barrier to the grace period),
/// where a shared in-flight counter cost a locked RMW per emit. An emit that
/// must wait (a full `.block` ring) waits outside the section.
///
/// Thread safety: `emit`, `stop`, `requestStop`, `state` from any thread.
/// Properties marked "reducer thread only" are touched by that thread alone
/// (checked in debug builds by `preconditionOnReducerThread()`).
final class LoopCore<State: Sendable, Event: Sendable>: Sendable {
    let options: SpinOptions
    /// The reducer's function and `observers.hasPending`, stored directly so
    /// that the per-event path loads them without generic field-offset lookups.
    let reduceFunction: @Sendable (inout State, UnsafeMutableRawPointer) -> Void
    let observersPending: UnsafeAtomic<Bool>  // owned by `observers`
    // The event queue, concretely typed (an existential would stop the
    // compiler from calling its methods directly): exactly one is non-nil,
    // named by `queueTag`. Unwrapped with `!` (a branch), not
    // `unsafelyUnwrapped`: that is a generic stdlib call in debug builds,
    // which looks up Optional<Queue<Event>> metadata on every call (a lock
    // convoy in the runtime under TSan, from the idle poll).
    let queueTag: QueueTag
    let lockFreeQueue: LockFreeQueue<Event>?
    let ringQueue: RingQueue<Event>?
    let baselineQueue: BaselineQueue<Event>?
    let counters = LoopCounters()
    let snapshot: StateSnapshot<State>
    let observers = StateObservers<State>()
    /// Wakes the reducer thread when events arrive.
    let parker = Parker()
    /// The spin's observers (see ``SpinObserver``); nil when it has none,
    /// which keeps every observer call off the engine's paths.
    let hub: ObserverHub<State, Event>?
    /// atomic: events accepted, counted only when observed (`hub` non-nil),
    /// so that batch reports can give the queue depth.
    let acceptedCount = UnsafeAtomic<Int>.create(0)

    // The atomics every emit touches are UnsafeAtomic (freed in deinit):
    // ManagedAtomic's storage-pointer getter is an out-of-line generic call.
    /// atomic: set once by stop; read by every emit inside its gate section
    /// (read-mostly line).
    let closed = UnsafeAtomic<Bool>.create(false)
    /// atomic: 0 until the first stop request, then 1 (drain) or 2
    /// (discard): set once by compare-exchange, so the first request wins.
    let stopMode = ManagedAtomic<Int>(0)
    /// atomic: the reducer thread's id, 0 until it starts.
    let reducerThreadToken = UnsafeAtomic<UInt>.create(0)
    /// atomic: 0 joinable, 1 joined by stop, 2 detached (loop released).
    let joinState = ManagedAtomic<Int>(0)

    private struct Completion {
        var report: StopReport?
        var waiters: [CheckedContinuation<StopReport, Never>] = []
    }

    // protected by lock: the final report and the stop calls waiting for it.
    private let completion = Lock(Completion())
    // Set once in start(), before any other thread can see the core.
    nonisolated(unsafe) private(set) var thread: OSThread?

    // reducer thread only: the running state, the states of the current
    // batch, events emitted on the reducer thread itself, the workers.
    // (Raw buffers and scalars rather than Array/Deque/tuples: see RawFIFO.)
    // `@exclusivity(unchecked)`: one thread touches them, so the dynamic
    // exclusivity checks (~5% of the reducer's time) prove nothing.
    // The state lives behind a pointer, not in a stored property: the reducer
    // passes `statePointer.pointee` to the user's reducer by address, where a
    // generic class property is first copied out (a value-witness call per
    // event, the reducer thread's largest cost in reduce-1p).
    nonisolated(unsafe) let statePointer: UnsafeMutablePointer<State>
    var state: State {
        @inline(__always) get { statePointer.pointee }
    }
    @exclusivity(unchecked) nonisolated(unsafe) var batchStates = RawBatch<State>()
    @exclusivity(unchecked) nonisolated(unsafe) var reentrant = RawFIFO<Event>()
    @exclusivity(unchecked) nonisolated(unsafe) var reducedCount = 0
    /// Whether the current batch collects each state (for feedbacks or observers).
    @exclusivity(unchecked) nonisolated(unsafe) var collecting = false
    /// Where waiting `states` observers start in this batch: they get
    /// `observerBaseState` first, then `batchStates[observerBaseIndex...]`.
    /// -1: no observer waiting.
    @exclusivity(unchecked) nonisolated(unsafe) var observerBaseIndex = -1
    @exclusivity(unchecked) nonisolated(unsafe) var observerBaseState: State
    nonisolated(unsafe) var dispatchedWorkers: [FeedbackWorker<State, Event>] = []
    nonisolated(unsafe) var inlineWorkers: [FeedbackWorker<State, Event>] = []
    nonisolated(unsafe) var attachedWorkers: [FeedbackWorker<State, Event>] = []
    @exclusivity(unchecked) nonisolated(unsafe) var hasDispatchedWorkers = false
    @exclusivity(unchecked) nonisolated(unsafe) var hasInlineWorkers = false

    init(spin: Spin<State, Event>, options: SpinOptions) {
        self.options = options
        self.reduceFunction = spin.reducer.reduceInPlace
        self.observersPending = observers.hasPending
        statePointer = .allocate(capacity: 1)
        statePointer.initialize(to: spin.initialState)
        self.observerBaseState = spin.initialState
        self.snapshot = StateSnapshot(spin.initialState)
        self.hub = ObserverHub(spin.observers)
        var lockFree: LockFreeQueue<Event>?
        var ring: RingQueue<Event>?
        var baseline: BaselineQueue<Event>?
        switch options.queue {
        case .lockFree:
            queueTag = .lockFree
            lockFree = LockFreeQueue<Event>()
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
        LiveCounts.loops.wrappingIncrement(ordering: .relaxed)
    }

    deinit {
        closed.destroy()
        acceptedCount.destroy()
        reducerThreadToken.destroy()
        statePointer.deinitialize(count: 1)
        statePointer.deallocate()
        LiveCounts.loops.wrappingDecrement(ordering: .relaxed)
    }

    /// Creates the workers, attaches gear feedbacks and starts the reducer
    /// thread. Called once, by `SpinLoop.init`.
    func start(spin: Spin<State, Event>) {
        for (index, feedback) in spin.feedbacks.enumerated() {
            let queue = feedback.queue ?? spin.executionQueue
                ?? DispatchQueue(label: "spindle.feedback.\(index)")
            let worker = FeedbackWorker(index: index, feedback: feedback, queue: queue, core: self)
            if case .attached = feedback.effect {
                attachedWorkers.append(worker)
            } else if feedback.runsOnReducerThread {
                inlineWorkers.append(worker)
            } else {
                dispatchedWorkers.append(worker)
            }
        }
        hasDispatchedWorkers = !dispatchedWorkers.isEmpty
        hasInlineWorkers = !inlineWorkers.isEmpty
        // Attached before the thread starts: gear events sent right after
        // start() are queued, not missed.
        for worker in attachedWorkers { worker.attach() }
        LiveCounts.reducerThreads.wrappingIncrement(ordering: .relaxed)
        thread = OSThread.spawn(name: "spindle-reducer") { [self] in
            defer { LiveCounts.reducerThreads.wrappingDecrement(ordering: .relaxed) }
            runReducerThread()
        }
    }

    // MARK: Emitting

    @inline(__always)
    var isOnReducerThread: Bool {
        reducerThreadToken.load(ordering: .relaxed) == currentThreadToken()
    }

    /// Crashes in debug builds when called off the reducer thread.
    @inline(__always)
    func preconditionOnReducerThread() {
        assert(isOnReducerThread, "Spindle: reducer-thread-only code ran on another thread")
    }

    /// Accepts `event` for reduction, or says why not. Any thread.
    @inline(__always)
    func emit(_ event: Event) -> EmitResult {
        if isOnReducerThread { return emitOnReducerThread(event) }
        spindle_gate_enter()
        // Relaxed: the grace period orders stop's store against this load.
        if closed.load(ordering: .relaxed) {
            spindle_gate_exit()
            return rejectAfterStop(event)
        }
        if tryEnqueueAndNotify(event) {
            spindle_gate_exit()
            if let hub { accepted(event, hub: hub) }
            return .accepted
        }
        let result = overflow(event)
        spindle_gate_exit()
        return result
    }

    // An observed loop's accepted event: counted for the queue depth, and
    // reported to the per-event observers.
    private func accepted(_ event: Event, hub: ObserverHub<State, Event>) {
        acceptedCount.wrappingIncrement(ordering: .relaxed)
        if hub.wantsEachEvent { hub.eventAccepted(event) }
    }

    private func rejectAfterStop(_ event: Event) -> EmitResult {
        counters.rejectedAfterStop.wrappingIncrement(ordering: .relaxed)
        hub?.eventRejected(event)
        return .stopped
    }

    /// An emit from an effect: false (and counted) unless accepted.
    @discardableResult
    func emitFromEffect(_ event: Event) -> Bool {
        emit(event) == .accepted
    }

    // The reducer thread never waits on its own queue: its events go to a
    // local deque reduced before the next batch, so a full bounded queue
    // cannot deadlock it.
    private func emitOnReducerThread(_ event: Event) -> EmitResult {
        if closed.load(ordering: .relaxed) { return rejectAfterStop(event) }
        reentrant.append(event)
        if let hub { accepted(event, hub: hub) }
        return .accepted
    }

    // A bounded queue is full: apply its policy. Called inside the emit's
    // gate section, and returns inside one.
    private func overflow(_ event: Event) -> EmitResult {
        guard case .bounded(_, let policy) = options.queue, let ring = ringQueue else {
            preconditionFailure("Spindle: only a bounded queue can be full")
        }
        switch policy {
        case .dropNewest:
            counters.dropped.wrappingIncrement(ordering: .relaxed)
            hub?.eventDropped(event)
            return .dropped
        case .block:
            while true {
                // Wait outside the section: stop's grace period must not wait
                // for a producer that waits for the reducer. Wake-ups come
                // from the reducer releasing slots, and from stop; the
                // timeout is a safety net, not the mechanism.
                spindle_gate_exit()
                ring.spaceParker.wait(spins: 200, timeoutNanoseconds: 1_000_000) { [closed] in
                    ring.depth < ring.capacity || closed.load(ordering: .relaxed)
                }
                spindle_gate_enter()
                if closed.load(ordering: .relaxed) { return rejectAfterStop(event) }
                if ring.tryEnqueue(event) {
                    parker.notifyAfterRMW()
                    if let hub { accepted(event, hub: hub) }
                    return .accepted
                }
            }
        }
    }

    // MARK: The queue

    /// Enqueues and wakes the reducer if it sleeps; false when the ring is full.
    @inline(__always)
    func tryEnqueueAndNotify(_ event: Event) -> Bool {
        switch queueTag {
        case .lockFree:
            lockFreeQueue!.tryEnqueue(event)
            // The wfcqueue enqueue is an xchg, a full barrier: no fence needed
            // between it and the parker's load of its waiter count.
            parker.notifyAfterRMW()
            return true
        case .ring:
            guard ringQueue!.tryEnqueue(event) else { return false }
            // The ring's claim is a seq_cst RMW on its tail, and the sleeping
            // reducer re-checks the tail (depth), so no fence is needed here
            // (a reducer woken before the publish spins until it lands).
            parker.notifyAfterRMW()
            return true
        case .baseline:
            baselineQueue!.tryEnqueue(event)
            parker.notify()
            return true
        }
    }

    /// Reducer thread only.
    @inline(__always)
    func drainQueue(max: Int, _ body: (UnsafeMutableRawPointer) -> Void) -> Int {
        switch queueTag {
        case .lockFree: lockFreeQueue!.drain(max: max, body)
        case .ring: ringQueue!.drain(max: max, body)
        case .baseline: baselineQueue!.drain(max: max, body)
        }
    }

    /// Reducer thread only.
    var queueIsEmpty: Bool {
        switch queueTag {
        case .lockFree: lockFreeQueue!.isEmpty
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

    // MARK: Stopping

    /// Closes the gate and wakes everyone who must notice. Any thread.
    func requestStop(_ mode: StopMode) {
        _ = stopMode.compareExchange(
            expected: 0, desired: mode == .discardPending ? 2 : 1, ordering: .relaxed)
        closed.store(true, ordering: .sequentiallyConsistent)
        parker.notify()
        ringQueue?.spaceParker.notify()
    }

    /// Stops the loop and waits for the reducer thread to finish and exit.
    func stop(_ mode: StopMode) async -> StopReport {
        requestStop(mode)
        let report = await withCheckedContinuation { (continuation: CheckedContinuation<StopReport, Never>) in
            completion.withLock { completion in
                if let report = completion.report {
                    continuation.resume(returning: report)
                } else {
                    completion.waiters.append(continuation)
                }
            }
        }
        // The thread resumed us as its last act: joining waits microseconds.
        if joinState.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged {
            thread?.join()
        }
        return report
    }

    /// The loop was released without stop: stop it in the background, and
    /// let the thread clean up after itself.
    func releaseWithoutStop() {
        requestStop(.drain)
        if joinState.compareExchange(expected: 0, desired: 2, ordering: .acquiringAndReleasing).exchanged {
            thread?.detach()
        }
    }

    /// Called by the reducer thread when it is done: publishes the report
    /// and resumes every waiting stop.
    func complete(with report: StopReport) {
        hub?.loopStopped(report)
        let waiters = completion.withLock { completion in
            completion.report = report
            let waiters = completion.waiters
            completion.waiters = []
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: report) }
    }

    var isStopped: Bool { completion.withLock { $0.report != nil } }
}

/// Which of a loop's three queue slots is in use.
enum QueueTag: UInt8, Sendable {
    case lockFree, ring, baseline
}
