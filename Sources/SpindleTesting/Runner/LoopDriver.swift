import Dispatch
@_spi(Benchmarks) import Spindle

/// Runs one loop of the real engine by hand, for a ``TestSpin``: its
/// slices, effect tasks and route drains are jobs run on the test's thread,
/// one at a time (see `ManualDrive`); what the loop does is read back from
/// an observer and the drive's hooks into the runner's books: the states,
/// the effect log, the runs in flight, the effects dispatched.
///
/// **Thread safety:** `Sendable`. The driving calls (`runSlice`,
/// `drainJobs`, `stop`) from the runner's caller, one at a time; the books
/// are behind a lock, written from the engine's callbacks on any thread.
final class LoopDriver<State: Sendable, Event: Sendable>: Sendable {
    let executor = ManualExecutor()
    let queue: TestQueue<Event>
    let books: RunBooks<State, Event>
    /// The loop's schedulings, held until the runner runs one (at most one
    /// is held at a time: the engine schedules a loop once).
    private let slices = Lock<[@Sendable () -> Void]>([])
    private let sliceArrivals = DispatchSemaphore(value: 0)
    private let loop: SpinLoop<State, Event>
    /// The feedbacks that are gears (attached), by index.
    private let gears: [Int]

    /// Starts `spin` (resolved: no per-start feedback left) on a manual
    /// drive; ``start()`` runs its first slice.
    /// - Parameters:
    ///   - stateOffset: added to the count of events reduced to name the
    ///     state a feedback's run starts from.
    ///   - divert: the events the queue collects instead of queueing.
    ///   - owner: the runner a ``TestClock`` drives after a wake-up.
    init(
        name: String, spin: Spin<State, Event>, stateOffset: Int = 0, divert: (@Sendable (Event) -> Bool)? = nil,
        owner: @escaping @Sendable () -> (any VirtualTimeDriver)?
    ) {
        let books = RunBooks<State, Event>(initialState: spin.initialState, routerIndex: spin.feedbacks.count)
        self.books = books
        let queue = TestQueue<Event>(divert: divert)
        self.queue = queue
        gears = spin.feedbacks.indices.filter {
            if case .attached = spin.feedbacks[$0].effect { true } else { false }
        }
        let observed = spin.replacingFeedbacks(with: spin.feedbacks.enumerated().map { index, feedback in
            feedback.wrappingAttachedEmitter { emitter in
                let run = TestEffectRun(feedback: index, state: 0)
                return EffectEmitter(emit: { event in
                    let accepted = emitter.emit(event)
                    books.append(run, accepted ? .emitted(event) : .discarded(event))
                    return accepted
                }, send: { event in
                    let accepted = await emitter.send(event)
                    books.append(run, accepted ? .emitted(event) : .discarded(event))
                    return accepted
                })
            }
        }).observed(by: BookObserver(books: books, queue: queue, stateOffset: stateOffset))
        let (executor, slices, arrivals) = (executor, slices, sliceArrivals)
        let drive = ManualDrive(
            taskExecutor: executor,
            dispatch: { work in executor.enqueue(work: work) },
            wrapRun: { run, body in
                let tag = RunTag(driver: owner())
                books.began(run, tag: tag)
                try await RunTag.$current.withValue(tag) { try await body() }
            },
            waitingForState: { RunTag.setWaitingForTest($0) },
            effectsRouted: { books.routed($0, state: queue.handed + stateOffset) },
            handlerTaken: { run, number in books.handlerTaken(run, effect: number) })
        let options = SpinOptions(
            executor: .manual(name: name, drive: drive) { job in
                slices.withLock { $0.append(job) }
                arrivals.signal()
            },
            queue: .custom(CustomEventQueueFactory(name: name) { queue }),
            // Errors are in the effect log (failed runs, unhandled effects).
            onEffectError: { _ in },
            maxBatch: 1)
        for index in gears { books.append(TestEffectRun(feedback: index, state: 0), .started) }
        do {
            loop = try observed.start(options: options)
        } catch {
            preconditionFailure("SpindleTesting: the test runner's options were refused: \(error)")
        }
    }

    /// Runs the loop's first slice: the initial state's delivery (gears are
    /// attached by the start), then the jobs it queued. Once, after the
    /// owner is set, so that the first runs know their runner.
    func start() {
        runSlice()
        drainJobs()
    }

    /// The latest state.
    var state: State { books.state }

    /// True once ``stop()`` has begun.
    var isStopped: Bool { books.isStopped }

    /// Emits `event` ahead of the pending events and reduces it.
    /// - Returns: false when the loop refused it (stopped).
    func send(_ event: Event) -> Bool {
        queue.sendNext()
        let accepted = loop.emit(event) == .accepted
        queue.endSend()
        guard accepted else { return false }
        queue.allowOne()
        runSlice()
        drainJobs()
        return true
    }

    /// Reduces the oldest pending event, if any (and not stopped).
    func step() -> Bool {
        guard !books.isStopped, !queue.pending.isEmpty else { return false }
        queue.allowOne()
        runSlice()
        drainJobs()
        return true
    }

    /// Runs the loop's held scheduling, if any: one slice, at most one
    /// event reduced (`maxBatch` 1).
    private func runSlice() {
        let held = slices.withLock { slices -> (@Sendable () -> Void)? in
            slices.isEmpty ? nil : slices.removeFirst()
        }
        held?()
    }

    /// Runs queued jobs (effect tasks, route drains) until none is left.
    func drainJobs() {
        while executor.runNext() {}
    }

    /// See `TestSpin.runUntilIdle`: nil when the caller should go round
    /// again (a job arrived while waiting).
    func settlement(by deadline: ContinuousClock.Instant) -> Settlement? {
        let waiting = books.unparkedRuns
        if waiting.isEmpty { return .settled }
        let left = deadline - ContinuousClock.now
        if left <= .zero { return .waiting(on: waiting) }
        _ = executor.waitForJob(timeout: left)
        return nil
    }

    /// Stops the loop as the engine's stop does, with the pending events
    /// left pending: the loop's last slice runs here (it arrives after the
    /// engine's grace period), the cancelled runs end, and the executor
    /// retires. Once.
    func stop() {
        guard books.beginStop() else { return }
        queue.freeze()
        loop.requestStop(.drain)
        // The last slice is scheduled from the grace thread; the stop
        // completes once every worker has stopped (a route's unhandled
        // report, a job, included).
        while !loop.isStopped {
            let held = slices.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            if let held {
                held()
            } else if !executor.runNext() {
                _ = sliceArrivals.wait(timeout: .now() + .milliseconds(1))
            }
        }
        for index in gears {
            books.append(TestEffectRun(feedback: index, state: 0), .cancelled)
            books.append(TestEffectRun(feedback: index, state: 0), .finished)
        }
        drainJobs()
        executor.retire()
    }
}

/// What a driven loop did, as a ``TestSpin`` reports it.
///
/// **Thread safety:** any thread; everything is behind a lock.
final class RunBooks<State: Sendable, Event: Sendable>: Sendable {
    private struct Books: Sendable {
        var states: [State]
        var events: [Event] = []
        var log: [EffectLogEntry<Event>] = []
        /// The engine's runs, named as the runner names them.
        var runs: [EffectRun: TestEffectRun] = [:]
        /// Runs that failed (their `effectFinished` follows, not logged).
        var failed: Set<EffectRun> = []
        /// Runs whose task body has begun and not ended, with their tags.
        var live: [TestEffectRun: RunTag] = [:]
        var effects: [any Sendable] = []
        var unhandled: [Int] = []
        var ambiguous: [AmbiguousEffectRouteError] = []
        /// Per effect number: its route and the state that dispatched it.
        var routing: [Int: (route: Int?, state: Int)] = [:]
        /// Router runs taken by a drain, not started yet: their effect number.
        var taken: [EffectRun: Int] = [:]
        var stopped = false
    }

    private let books: Lock<Books>
    /// The router's feedback index in the engine's runs (the spin's
    /// feedback count: the router runs as one more feedback).
    let routerIndex: Int

    init(initialState: State, routerIndex: Int) {
        books = Lock(Books(states: [initialState]))
        self.routerIndex = routerIndex
    }

    var state: State { books.withLock { $0.states[$0.states.count - 1] } }
    var states: [State] { books.withLock { $0.states } }
    var events: [Event] { books.withLock { $0.events } }
    var log: [EffectLogEntry<Event>] { books.withLock { $0.log } }
    var effects: [any Sendable] { books.withLock { $0.effects } }
    var unhandled: [any Sendable] { books.withLock { books in books.unhandled.map { books.effects[$0] } } }
    var ambiguous: [AmbiguousEffectRouteError] { books.withLock { $0.ambiguous } }
    var isStopped: Bool { books.withLock { $0.stopped } }
    var liveRuns: [TestEffectRun] { books.withLock { $0.live.keys.sorted(by: Self.runOrder) } }

    /// Runs in flight that wait on something other than the test.
    var unparkedRuns: [TestEffectRun] {
        books.withLock { $0.live.filter { !$0.value.isParked }.keys.sorted(by: Self.runOrder) }
    }

    /// Marks the stop begun; false when it already was.
    func beginStop() -> Bool {
        books.withLock { books in
            defer { books.stopped = true }
            return !books.stopped
        }
    }

    func append(_ run: TestEffectRun, _ kind: EffectLogEntry<Event>.Kind) {
        books.withLock { $0.log.append(.init(run: run, kind: kind)) }
    }

    func reduced(_ event: Event, into state: State) {
        books.withLock { books in
            books.events.append(event)
            books.states.append(state)
        }
    }

    /// The engine's run `run` started; `state` is the index of the state
    /// it started from (a feedback's run).
    func started(_ run: EffectRun, state: Int) {
        books.withLock { books in
            let named: TestEffectRun
            if run.feedbackIndex == routerIndex, let number = books.taken.removeValue(forKey: run) {
                let routing = books.routing[number]
                named = TestEffectRun(effect: number, route: routing?.route, state: routing?.state ?? state)
            } else {
                named = TestEffectRun(feedback: run.feedbackIndex, state: state)
            }
            books.runs[run] = named
            books.log.append(.init(run: named, kind: .started))
        }
    }

    /// An entry of a started run's.
    func record(_ run: EffectRun, _ kind: EffectLogEntry<Event>.Kind) {
        books.withLock { books in
            guard let named = books.runs[run] else { return }
            switch kind {
            case .failed:
                books.failed.insert(run)
                books.live[named] = nil
            case .finished:
                books.live[named] = nil
                if books.failed.remove(run) != nil { return }
            default:
                break
            }
            books.log.append(.init(run: named, kind: kind))
        }
    }

    /// A run's task body began (see `ManualDrive.wrapRun`).
    func began(_ run: EffectRun, tag: RunTag) {
        books.withLock { books in
            if let named = books.runs[run] { books.live[named] = tag }
        }
    }

    /// One reduction's effects, as the router routed them.
    func routed(_ effects: [ManualDrive.RoutedEffect], state: Int) {
        books.withLock { books in
            for routed in effects {
                books.effects.append(routed.effect)
                books.routing[routed.number] = (routed.route, state)
                let run = TestEffectRun(effect: routed.number, route: routed.route, state: state)
                books.log.append(.init(run: run, kind: .dispatched(routed.effect)))
                if routed.route == nil {
                    books.unhandled.append(routed.number)
                    books.log.append(.init(run: run, kind: .unhandled))
                }
                if let ambiguity = routed.ambiguity { books.ambiguous.append(ambiguity) }
            }
        }
    }

    func handlerTaken(_ run: EffectRun, effect number: Int) {
        books.withLock { $0.taken[run] = number }
    }

    private static func runOrder(_ lhs: TestEffectRun, _ rhs: TestEffectRun) -> Bool {
        (lhs.state, lhs.feedback, lhs.effect ?? -1) < (rhs.state, rhs.feedback, rhs.effect ?? -1)
    }
}

/// The observer a ``LoopDriver`` installs: the engine's reports, into the
/// books.
struct BookObserver<State: Sendable, Event: Sendable>: SpinObserver {
    let books: RunBooks<State, Event>
    let queue: TestQueue<Event>
    let stateOffset: Int

    func eventReduced(_ event: Event, newState: State, reduction: Int) {
        books.reduced(event, into: newState)
    }

    func effectStarted(_ run: EffectRun) {
        // A feedback's runs start in the slice that reduced the state they
        // start from: the queue's count of events taken names it.
        books.started(run, state: queue.handed + stateOffset)
    }

    func effectEmitted(_ event: Event, from run: EffectRun) { books.record(run, .emitted(event)) }
    func lateEventDiscarded(_ event: Event, from run: EffectRun) { books.record(run, .discarded(event)) }
    func effectCancelled(_ run: EffectRun) { books.record(run, .cancelled) }
    func effectFinished(_ run: EffectRun) { books.record(run, .finished) }

    func effectFailed(_ run: EffectRun, error: any Error) {
        // A handler's error as it threw it (the loop wraps it for its hook).
        books.record(run, .failed((error as? EffectHandlerError)?.underlying ?? error))
    }
}
