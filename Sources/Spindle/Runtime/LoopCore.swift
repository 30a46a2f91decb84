import Atomics
import DequeModule
import Dispatch

/// The engine behind a ``SpinLoop``: the gate that decides what `emit`
/// accepts, the event queue, the reducer thread and the feedback workers.
///
/// The gate is one atomic word: bit 0 is "closed" (stop requested), and
/// every emit in flight adds 2 while it enqueues. Stop sets bit 0, then the
/// reducer waits until no emit is in flight before its final drain — so an
/// emit either answers `.stopped` or its event is in the queue before the
/// final drain. Nothing accepted is lost.
///
/// Thread safety: `emit`, `stop`, `requestStop`, `state` from any thread.
/// Properties marked "reducer thread only" are touched by that thread alone
/// (checked in debug builds by `preconditionOnReducerThread()`).
final class LoopCore<State: Sendable, Event: Sendable>: Sendable {
    let options: SpinOptions
    let reducer: Reducer<State, Event>
    let queue: any EventQueue<Event>
    let counters = LoopCounters()
    let snapshot: StateSnapshot<State>
    let observers = StateObservers<State>()
    /// Wakes the reducer thread when events arrive.
    let parker = Parker()

    /// atomic: any thread. Bit 0: closed. Bits 1...: emits in flight (x2).
    let gate = ManagedAtomic<Int>(0)
    /// atomic: 0 until the first stop request, then 1 (drain) or 2
    /// (discard): set once by compare-exchange, so the first request wins.
    let stopMode = ManagedAtomic<Int>(0)
    /// atomic: the reducer thread's id, 0 until it starts.
    let reducerThreadToken = ManagedAtomic<UInt>(0)
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
    nonisolated(unsafe) var state: State
    nonisolated(unsafe) var batchStates: [State] = []
    nonisolated(unsafe) var reentrant = Deque<Event>()
    nonisolated(unsafe) var reducedCount = 0
    /// Whether the current batch collects each state (for feedbacks or observers).
    nonisolated(unsafe) var collecting = false
    /// Where waiting `states` observers start in this batch: the state they
    /// get first, and the index in `batchStates` of the state after it.
    nonisolated(unsafe) var observerBase: (index: Int, state: State)?
    nonisolated(unsafe) var dispatchedWorkers: [FeedbackWorker<State, Event>] = []
    nonisolated(unsafe) var inlineWorkers: [FeedbackWorker<State, Event>] = []
    nonisolated(unsafe) var attachedWorkers: [FeedbackWorker<State, Event>] = []

    init(spin: Spin<State, Event>, options: SpinOptions) {
        self.options = options
        self.reducer = spin.reducer
        self.state = spin.initialState
        self.snapshot = StateSnapshot(spin.initialState)
        switch options.queue {
        case .lockFree: queue = LockFreeQueue<Event>()
        case .bounded(let capacity, _): queue = RingQueue<Event>(capacity: capacity)
        case .baseline: queue = BaselineQueue<Event>()
        }
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
        // Attached before the thread starts: gear events sent right after
        // start() are queued, not missed.
        for worker in attachedWorkers { worker.attach() }
        thread = OSThread.spawn(name: "spindle-reducer") { [self] in runReducerThread() }
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
        let prior = gate.loadThenWrappingIncrement(by: 2, ordering: .acquiring)
        if prior & 1 != 0 {
            gate.wrappingDecrement(by: 2, ordering: .releasing)
            counters.rejectedAfterStop.wrappingIncrement(ordering: .relaxed)
            return .stopped
        }
        let result: EmitResult = queue.tryEnqueue(event) ? .accepted : overflow(event)
        gate.wrappingDecrement(by: 2, ordering: .releasing)
        if result == .accepted { parker.notify() }
        return result
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
        if gate.load(ordering: .relaxed) & 1 != 0 {
            counters.rejectedAfterStop.wrappingIncrement(ordering: .relaxed)
            return .stopped
        }
        reentrant.append(event)
        return .accepted
    }

    // A bounded queue is full: apply its policy. Called inside the gate.
    private func overflow(_ event: Event) -> EmitResult {
        guard case .bounded(_, let policy) = options.queue, let space = queue.spaceParker else {
            preconditionFailure("Spindle: only a bounded queue can be full")
        }
        switch policy {
        case .dropNewest:
            counters.dropped.wrappingIncrement(ordering: .relaxed)
            return .dropped
        case .block:
            while true {
                if queue.tryEnqueue(event) { return .accepted }
                if gate.load(ordering: .acquiring) & 1 != 0 {
                    counters.rejectedAfterStop.wrappingIncrement(ordering: .relaxed)
                    return .stopped
                }
                // Wake-ups come from the reducer releasing slots, and from
                // stop; the timeout is a safety net, not the mechanism.
                space.wait(spins: 200, timeoutNanoseconds: 1_000_000) { [queue, gate] in
                    queue.depth < queue.capacity || gate.load(ordering: .relaxed) & 1 != 0
                }
            }
        }
    }

    /// Reports an effect's error to the hook (or the logger). Any thread.
    func report(_ error: EffectError) {
        counters.effectErrors.wrappingIncrement(ordering: .relaxed)
        if let hook = options.onEffectError {
            hook(error)
        } else {
            options.logger.error(
                "effect of feedback \(error.feedbackIndex) threw: \(String(describing: error.underlying))")
        }
    }

    // MARK: Stopping

    /// Closes the gate and wakes everyone who must notice. Any thread.
    func requestStop(_ mode: StopMode) {
        _ = stopMode.compareExchange(
            expected: 0, desired: mode == .discardPending ? 2 : 1, ordering: .relaxed)
        _ = gate.loadThenBitwiseOr(with: 1, ordering: .sequentiallyConsistent)
        parker.notify()
        queue.spaceParker?.notify()
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
