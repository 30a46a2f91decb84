import Spindle

/// Runs a list of feedbacks the way the engine does, but deterministically:
/// synchronous effects on the caller's thread, every other form as a task on
/// a ``ManualExecutor`` the runner drains. Shared by ``TestSpin`` and
/// ``TestFeedback``, which decide where the states come from and what
/// happens to the emitted events.
///
/// Strategies follow the contract: under
/// ``Spindle/ExecutionStrategy/cancelOnNewState`` a state that passes the
/// filter cancels the feedback's previous runs (their tasks are cancelled)
/// and bumps the feedback's generation; an event emitted by a run of an
/// older generation is logged as discarded and never queued. Under
/// ``Spindle/ExecutionStrategy/continueOnNewState`` runs go on. A filtered-out
/// state starts nothing and cancels nothing.
///
/// The runs of a spin's effect router (see `RouterHost`) go through
/// `runSync(_:body:)` and `start(_:cancellingPrevious:body:)` too: they
/// share the log, the pending FIFO and stop, and are never overtaken.
///
/// **Thread safety:** `deliver`, `attach`, `drainExecutor` and `stop` from
/// the runner's caller, one at a time; emitters from any thread. User code
/// (effects, filters, gears) never runs under the lock.
final class EffectHost<State: Sendable, Event: Sendable>: Sendable {
    /// An emitted event waiting to be reduced.
    struct Pending: Sendable {
        let run: TestEffectRun
        let event: Event
    }

    private struct LiveRun: Sendable {
        let task: Task<Void, Never>
        let tag: RunTag
    }

    private struct PerFeedback: Sendable {
        var generation: UInt64 = 0
        /// Runs not cancelled and not ended, oldest first.
        var current: [TestEffectRun] = []
        var source: StateSource<State>?
        /// Whether a source feedback's one run has started.
        var sourceStarted = false
        var attachment: AttachedSubscription?
        /// A pipe feedback's pipe, once opened.
        var pipe: StatePipe<State>?
    }

    private struct Books: Sendable {
        var feedbacks: [PerFeedback]
        /// Runs whose task has not ended (cancelled or not).
        var live: [TestEffectRun: LiveRun] = [:]
        /// The effect router's runs not cancelled and not ended, oldest first.
        var routerRuns: [TestEffectRun] = []
        var pending: [Pending] = []
        var log: [EffectLogEntry<Event>] = []
        var stopped = false
    }

    let feedbacks: [Feedback<State, Event>]
    let executor = ManualExecutor()
    // protected by lock: runs, pending events, the log.
    private let books: Lock<Books>
    // protected by lock: the runner that owns this host (weak: no cycle).
    private let owner = Lock(WeakDriver(value: nil))

    init(feedbacks: [Feedback<State, Event>]) {
        let feedbacks = feedbacks.flatMap(\.flattened)
        self.feedbacks = feedbacks
        books = Lock(Books(feedbacks: Array(repeating: PerFeedback(), count: feedbacks.count)))
    }

    /// Sets the runner a ``TestClock`` drives after waking one of our runs.
    func setOwner(_ driver: any VirtualTimeDriver) {
        owner.withLock { $0.value = driver }
    }

    var log: [EffectLogEntry<Event>] { books.withLock { $0.log } }
    var pendingEvents: [Event] { books.withLock { $0.pending.map(\.event) } }
    var liveRuns: [TestEffectRun] { books.withLock { $0.live.keys.sorted(by: Self.runOrder) } }

    /// Runs in flight that wait on something other than the test.
    var unparkedRuns: [TestEffectRun] {
        books.withLock { $0.live.filter { !$0.value.tag.isParked }.keys.sorted(by: Self.runOrder) }
    }

    /// The end of one round of a `runUntilIdle`, once the executor is
    /// drained and no event waits: `.settled` when every run in flight is
    /// parked on the test, `.waiting(on:)` when some are not and `deadline`
    /// has passed; otherwise waits (up to the deadline) for a job to arrive
    /// and returns nil, for the caller to go round again.
    func settlement(by deadline: ContinuousClock.Instant) -> Settlement? {
        let waiting = unparkedRuns
        if waiting.isEmpty { return .settled }
        let left = deadline - ContinuousClock.now
        if left <= .zero { return .waiting(on: waiting) }
        _ = executor.waitForJob(timeout: left)
        return nil
    }

    /// True once ``stop()`` has begun.
    var isStopped: Bool { books.withLock { $0.stopped } }

    /// Appends an entry to the log.
    func record(_ run: TestEffectRun, _ kind: EffectLogEntry<Event>.Kind) {
        books.withLock { $0.log.append(.init(run: run, kind: kind)) }
    }

    /// Takes the oldest pending event.
    func takePending() -> Pending? {
        books.withLock { $0.pending.isEmpty ? nil : $0.pending.removeFirst() }
    }

    /// Runs queued jobs until none is left (jobs they enqueue included).
    func drainExecutor() {
        while executor.runNext() {}
    }

    /// Subscribes the gear (attached) feedbacks. Once, before any state.
    func attach() {
        for (index, feedback) in feedbacks.enumerated() {
            guard case .attached(let subscribe) = feedback.effect else { continue }
            let run = TestEffectRun(feedback: index, state: 0)
            books.withLock { $0.log.append(.init(run: run, kind: .started)) }
            let subscription = subscribe(EffectEmitter { [weak self] event in
                self?.emit(event, from: run, generation: nil) ?? false
            })
            books.withLock { $0.feedbacks[index].attachment = subscription }
        }
    }

    /// Hands the state at `index` (in the runner's states) to every feedback,
    /// in declaration order.
    func deliver(_ state: State, index: Int) {
        for (feedbackIndex, feedback) in feedbacks.enumerated() {
            if books.withLock({ $0.stopped }) { return }
            if let filter = feedback.filter, !filter(state) { continue }
            let run = TestEffectRun(feedback: feedbackIndex, state: index)
            switch feedback.effect {
            case .sync(let effect):
                runSync(run) { effect(state) }
            case .async(let effect):
                start(run, cancellingPrevious: feedback.strategy == .cancelOnNewState) { emitter in
                    if let event = try await effect(state) { _ = emitter.emit(event) }
                }
            case .sequence(let body):
                start(run, cancellingPrevious: feedback.strategy == .cancelOnNewState) { emitter in
                    try await body(state, emitter)
                }
            case .stream(let body):
                let (source, isNew) = books.withLock { books -> (StateSource<State>, Bool) in
                    if let source = books.feedbacks[feedbackIndex].source { return (source, false) }
                    let source = StateSource<State>()
                    books.feedbacks[feedbackIndex].source = source
                    return (source, true)
                }
                if isNew {
                    start(run, cancellingPrevious: false) { emitter in
                        defer { source.finish() }  // a run that ends early takes no more states
                        try await body(source.stream, emitter)
                    }
                }
                source.yield(state)
            case .source(let body):
                let isNew = books.withLock { books -> Bool in
                    if books.feedbacks[feedbackIndex].sourceStarted { return false }
                    books.feedbacks[feedbackIndex].sourceStarted = true
                    return true
                }
                if isNew {
                    start(run, cancellingPrevious: false) { emitter in try await body(emitter) }
                }
            case .pipe(let open):
                let pipe = books.withLock { books -> (StatePipe<State>?, Bool) in
                    (books.feedbacks[feedbackIndex].pipe, books.feedbacks[feedbackIndex].pipe == nil)
                }
                if let pipe = pipe.0 {
                    pipe.send(state)
                } else {
                    let opened = open(EffectEmitter { [weak self] event in
                        self?.emit(event, from: run, generation: nil) ?? false
                    })
                    books.withLock { $0.feedbacks[feedbackIndex].pipe = opened }
                    opened.send(state)
                }
            case .attached, .merged, .perStart:
                // Attached at start; merged and per-start feedbacks are
                // replaced by their parts before the host is made.
                break
            }
        }
    }

    /// Cancels every run, detaches the gears, lets the cancelled runs end,
    /// and retires the executor. Events emitted afterwards are discarded.
    func stop() {
        let (tasks, attachments, sources, pipes) = books.withLock { books in
            guard !books.stopped else {
                return ([Task<Void, Never>](), [AttachedSubscription](), [StateSource<State>](), [StatePipe<State>]())
            }
            books.stopped = true
            var tasks: [Task<Void, Never>] = []
            for run in books.routerRuns {
                books.log.append(.init(run: run, kind: .cancelled))
                if let live = books.live[run] { tasks.append(live.task) }
            }
            books.routerRuns = []
            for index in books.feedbacks.indices {
                for run in books.feedbacks[index].current {
                    books.log.append(.init(run: run, kind: .cancelled))
                    if let live = books.live[run] { tasks.append(live.task) }
                }
                books.feedbacks[index].current = []
                if books.feedbacks[index].attachment != nil {
                    let run = TestEffectRun(feedback: index, state: 0)
                    books.log.append(.init(run: run, kind: .cancelled))
                    books.log.append(.init(run: run, kind: .finished))
                }
            }
            let attachments = books.feedbacks.compactMap(\.attachment)
            let sources = books.feedbacks.compactMap(\.source)
            let pipes = books.feedbacks.compactMap(\.pipe)
            for index in books.feedbacks.indices {
                books.feedbacks[index].attachment = nil
                books.feedbacks[index].pipe = nil
            }
            return (tasks, attachments, sources, pipes)
        }
        for source in sources { source.finish() }
        for pipe in pipes { pipe.close() }
        for task in tasks { task.cancel() }
        for attachment in attachments { attachment.cancel() }
        drainExecutor()
        executor.retire()
    }

    /// Runs a synchronous effect on the caller's thread: started, then its
    /// event (if any) queued, then finished.
    func runSync(_ run: TestEffectRun, body: () -> Event?) {
        record(run, .started)
        let event = body()
        books.withLock { books in
            if let event {
                books.pending.append(Pending(run: run, event: event))
                books.log.append(.init(run: run, kind: .emitted(event)))
            }
            books.log.append(.init(run: run, kind: .finished))
        }
    }

    /// Starts a run as a task on the executor (nothing after ``stop()``).
    /// `cancellingPrevious`: the run's feedback uses
    /// ``Spindle/ExecutionStrategy/cancelOnNewState`` (never for router runs).
    func start(
        _ run: TestEffectRun,
        cancellingPrevious: Bool,
        body: @escaping @Sendable (EffectEmitter<Event>) async throws -> Void
    ) {
        let tag = RunTag(driver: owner.withLock { $0.value })
        let cancelled = books.withLock { books -> [Task<Void, Never>] in
            guard !books.stopped else { return [] }
            var cancelled: [Task<Void, Never>] = []
            if cancellingPrevious {
                books.feedbacks[run.feedback].generation &+= 1
                for previous in books.feedbacks[run.feedback].current {
                    books.log.append(.init(run: previous, kind: .cancelled))
                    if let live = books.live[previous] { cancelled.append(live.task) }
                }
                books.feedbacks[run.feedback].current = []
            }
            let generation = cancellingPrevious ? books.feedbacks[run.feedback].generation : nil
            let emitter = EffectEmitter<Event> { [weak self] event in
                self?.emit(event, from: run, generation: generation) ?? false
            }
            books.log.append(.init(run: run, kind: .started))
            // The executor only runs jobs when the runner drains it, so the
            // task cannot end before it is recorded below.
            let task = Task(executorPreference: executor) { [weak self] in
                await RunTag.$current.withValue(tag) {
                    var failure: (any Error)?
                    do {
                        try await body(emitter)
                    } catch {
                        if !(error is CancellationError), !Task.isCancelled { failure = error }
                    }
                    self?.ended(run, failure: failure)
                }
            }
            books.live[run] = LiveRun(task: task, tag: tag)
            if run.isEffectRouterRun {
                books.routerRuns.append(run)
            } else {
                books.feedbacks[run.feedback].current.append(run)
            }
            return cancelled
        }
        for task in cancelled { task.cancel() }  // outside the lock: cancellation handlers run here
    }

    private func ended(_ run: TestEffectRun, failure: (any Error)?) {
        books.withLock { books in
            books.live[run] = nil
            if run.isEffectRouterRun {
                books.routerRuns.removeAll { $0 == run }
            } else {
                books.feedbacks[run.feedback].current.removeAll { $0 == run }
            }
            let kind: EffectLogEntry<Event>.Kind = failure.map { .failed($0) } ?? .finished
            books.log.append(.init(run: run, kind: kind))
        }
    }

    // Any thread. `generation` nil: the run is never overtaken (continueOnNewState, gears).
    private func emit(_ event: Event, from run: TestEffectRun, generation: UInt64?) -> Bool {
        books.withLock { books in
            if books.stopped || (generation != nil && books.feedbacks[run.feedback].generation != generation) {
                books.log.append(.init(run: run, kind: .discarded(event)))
                return false
            }
            books.pending.append(Pending(run: run, event: event))
            books.log.append(.init(run: run, kind: .emitted(event)))
            return true
        }
    }

    private static func runOrder(_ lhs: TestEffectRun, _ rhs: TestEffectRun) -> Bool {
        (lhs.state, lhs.feedback, lhs.effect ?? -1) < (rhs.state, rhs.feedback, rhs.effect ?? -1)
    }
}
