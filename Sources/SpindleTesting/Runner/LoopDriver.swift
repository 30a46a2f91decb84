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
    /// The effect tasks' jobs and the route drains (thread-safe itself).
    let executor = ManualExecutor()
    /// The loop's queue (thread-safe itself).
    let queue: TestQueue<Event>
    /// What the loop did (thread-safe itself).
    let books: RunBooks<State, Event>
    // protected by lock: the loop's schedulings, held until the runner runs
    // one (at most one is held at a time: the engine schedules a loop once).
    private let slices = Lock<[@Sendable () -> Void]>([])
    /// Signalled once per scheduling held, for the stop's wait.
    private let sliceArrivals = DispatchSemaphore(value: 0)
    private let loop: SpinLoop<State, Event>
    /// The feedbacks that are gears (attached), by index. Immutable.
    private let gears: [Int]
    // protected by lock: the runner a ``TestClock`` drives after waking one
    // of this loop's runs (weak: the runner owns this driver).
    private let owner = Lock(WeakDriver(value: nil))

    /// Starts `spin` (resolved: no per-start feedback left) on a manual
    /// drive; ``start(owner:)`` runs its first slice.
    /// - Parameters:
    ///   - stateOffset: added to the count of events reduced to name the
    ///     state a feedback's run starts from.
    ///   - divert: the events the queue collects instead of queueing.
    init(
        name: String, spin: Spin<State, Event>, stateOffset: Int = 0, divert: (@Sendable (Event) -> Bool)? = nil
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
        let (executor, slices, arrivals, owner) = (executor, slices, sliceArrivals, owner)
        let drive = ManualDrive(
            taskExecutor: executor,
            dispatch: { work in executor.enqueue(work: work) },
            wrapRun: { run, body in
                let tag = RunTag(driver: owner.withLock { $0.value })
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

    /// Sets the runner a ``TestClock`` drives after waking one of the
    /// loop's runs, then runs the loop's first slice (the initial state's
    /// delivery; gears were attached by the start) and the jobs it queued,
    /// so that the first runs know their runner. Once, from the runner's
    /// initializer.
    func start(owner runner: any VirtualTimeDriver) {
        owner.withLock { $0.value = runner }
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
        reduceOne()
        return true
    }

    /// Reduces the oldest pending event, if any (and not stopped).
    func step() -> Bool {
        guard !books.isStopped, queue.hasPending else { return false }
        reduceOne()
        return true
    }

    // Lets the loop's next slice take one event, runs it, then the jobs it
    // queued.
    private func reduceOne() {
        queue.allowOne()
        runSlice()
        drainJobs()
    }

    /// Runs the loop's held scheduling, if any: one slice, at most one
    /// event reduced (`maxBatch` 1).
    /// - Returns: false when no scheduling was held.
    @discardableResult
    private func runSlice() -> Bool {
        let held = slices.withLock { slices -> (@Sendable () -> Void)? in
            slices.isEmpty ? nil : slices.removeFirst()
        }
        held?()
        return held != nil
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
            if !runSlice(), !executor.runNext() {
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
