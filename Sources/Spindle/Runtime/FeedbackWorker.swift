internal import CSpindle
internal import Atomics
import Dispatch

/// Runs one feedback of a running loop.
///
/// Placement: a feedback that names no queue runs on the loop's executor,
/// right after each reduction, in declaration order (`runInline`) — a sync
/// effect is called there, an async or stream effect starts its task there.
/// A feedback that names a queue gets the loop's states in batches: the
/// runner appends each batch to the worker's mailbox and schedules a drain
/// on the queue only when none is scheduled; one drain handles everything
/// queued. Async and stream effects of such a feedback run on that queue
/// (a task executor over it).
///
/// Each state cancels the previous run (``ExecutionStrategy/cancelOnNewState``)
/// by bumping the generation: a run's events are enqueued under the same
/// lock only if its generation is still current, so an event emitted after
/// the cancellation is discarded, never reduced. Nothing under that lock
/// waits or calls user code: a full `.block` queue is waited for outside it,
/// and observer calls are made afterwards, in lock order (`OrderedReports`).
///
/// Thread safety: `deliver`, `runInline` and `stop` on the loop's runner; the
/// drain runs on `queue`; emitters run on any thread.
final class FeedbackWorker<State: Sendable, Event: Sendable>: Sendable {
    // Raw buffers, not arrays: this runs unspecialized for the user's State
    // (see RawFIFO on generic metadata costs).
    // Both state buffers start empty and grow on first use: an inline
    // worker (the default placement) never uses them, and a loop with one
    // feedback should not carry two 64-state buffers.
    private struct Mailbox: ~Copyable {
        var pending = RawFIFO<State>()
        var scheduled = false
        /// A drain is running on the queue (it may be calling the effect).
        var running = false
        /// The initial state has not been taken by a drain yet: conflation
        /// keeps it (a renderer always draws the initial state first).
        var initialPending = true
        var stopped = false
        /// Set by a stop that found a drain running: called by that drain
        /// as it leaves the queue.
        var onDrained: (@Sendable () -> Void)?
    }

    private struct Runs {
        var generation: UInt64 = 0
        var nextID: UInt64 = 0
        /// The live runs (see `StartingRuns`).
        var live = StartingRuns()
        var stopped = false
        var attachment: AttachedSubscription?
        /// A pipe feedback's open pipe, closed by `stop`, and its run.
        var pipe: StatePipe<State>?
        var pipeRun: EffectRun?
    }

    private enum RunEmit {
        case accepted, refused, late, full
    }

    // What a state's inline run reads comes first, together: right after
    // the object's header, on one line or two, where it was spread over
    // four (a loop per connection finds its workers cold at each request).
    /// The feedback's `syncEffectWritingInto` (the plain sync form), and the
    /// memory it writes its event into: used by `runInline` on an unobserved
    /// loop, where receiving an `Event?` from `syncEffect` would cost a
    /// generic-metadata lookup per call. For the other forms a closure that
    /// is never called, and no memory (`eventScratch` nil).
    /// Not an optional: binding one copies the closure, a retain and a
    /// release of its context per state, where calling a constant property
    /// borrows it.
    private let syncEffectWritingInto: @Sendable (State, UnsafeMutableRawPointer) -> Bool
    private let filter: (@Sendable (State) -> Bool)?
    /// Inline runs only: holds one Event between the effect's return and
    /// its emit; uninitialized otherwise. nil for other workers. Memory the
    /// runner alone touches, as `runnerOwned` (hence `nonisolated(unsafe)`).
    nonisolated(unsafe) private let eventScratch: UnsafeMutableRawPointer?
    /// The next inline worker of the loop, in declaration order. Set by
    /// the loop's start before its first slice (which the start's
    /// scheduling publishes to the runner), then read by the runner, and
    /// cut by the loop's finish as it stops the chain. Runner-owned, as
    /// `runnerOwned` is (see `RunnerOwned` for the unchecked accesses).
    @exclusivity(unchecked) nonisolated(unsafe) var nextInline: FeedbackWorker?
    let index: Int
    /// The feedback itself, for what a sync effect called inline never
    /// needs: an async, stream or pipe run, a gear's attach, the strategy.
    /// Boxed, and nil for such a worker (the default placement): 112 bytes
    /// less per worker, which a loop per connection pays per connection.
    private let kept: KeptFeedback<State, Event>?
    private var feedback: Feedback<State, Event> { kept!.feedback }
    /// Whether the feedback takes only the latest state
    /// (`StateDelivery.latestState`): its mailbox keeps at most one state,
    /// or, inline, it runs once per batch.
    let takesLatestOnly: Bool
    /// The feedback's own queue; nil: it runs on the loop's executor.
    let queue: DispatchQueue?
    private let core: LoopCore<State, Event>
    /// The synchronous effect, unpacked once: a `switch` over the generic
    /// `Feedback.Effect` asked the runtime for the enum's metadata on every
    /// state (see RawFIFO on generic metadata costs). nil for the other forms.
    private let syncEffect: (@Sendable (State) -> Event?)?
    /// Where the tasks of async and stream effects run after their first
    /// suspension (until then they run where the state was handed over):
    /// the feedback's queue, else the loop's serial queue
    /// (`SpinExecutor.queue`), else nil, the global concurrent executor.
    private let taskExecutor: QueueTaskExecutor?
    /// Observer calls about runs, in the order the `runs` lock decided them;
    /// nil when the loop has no observer.
    private let reports: OrderedReports?
    // The two locks and the flag below serve what runs off the loop's
    // runner: a queue's drain, async and stream runs, a gear's subscription,
    // a pipe. A sync effect called inline (the default placement) has none
    // of these and gets none of them: nil, and about 350 bytes less per
    // worker, which a server with a loop per connection pays per connection.
    // Every path but `stop` is one such a worker never takes.
    // protected by lock: states waiting for the drain, and the drain flag.
    private let mailboxLock: Lock<Mailbox>?
    // protected by lock: the generation and the live runs.
    private let runsLock: Lock<Runs>?
    /// atomic: set by `stop` (runner), read by a drain of `queue` before
    /// each state, so no effect is called once the stop has begun.
    private let stoppingFlag: ManagedAtomic<Bool>?
    private var mailbox: Lock<Mailbox> { mailboxLock! }
    private var runs: Lock<Runs> { runsLock! }
    private var stopping: ManagedAtomic<Bool> { stoppingFlag! }
    /// A stream feedback's states (see `Feedback.Effect.stream`): the input
    /// is yielded to by the worker's one runner (in order) and finished by
    /// `stop`; both ends are thread-safe. nil for the other forms.
    private let streamStates: AsyncStream<State>?
    private let streamInput: AsyncStream<State>.Continuation?
    /// The worker's unlocked storage: see `RunnerOwned`.
    @exclusivity(unchecked) nonisolated(unsafe) var runnerOwned = RunnerOwned()

    /// Everything in a worker that no lock guards, in one place. It is
    /// touched only by the worker's one runner: the drain of its `queue`
    /// (one at a time: the mailbox's `scheduled` flag hands the queue from
    /// one drain to the next, under its lock), or for an inline worker the
    /// loop's runner (one at a time: the scheduling CAS orders consecutive
    /// runners). Debug builds check it at the doors (`assertOnQueue`,
    /// `assertOnRunner`). Hence `nonisolated(unsafe)`, once, here; and
    /// `@exclusivity(unchecked)`, as the one runner never overlaps accesses.
    struct RunnerOwned: ~Copyable {
        /// The states being handled by a drain of `queue`, exchanged with
        /// the mailbox's buffer under the lock.
        var draining = RawFIFO<State>()
        /// Whether the stream (or source) feedback's run has started.
        var streamStarted = false
        /// A pipe feedback's pipe, once opened (the stop closes it through
        /// `runs.pipe`).
        var pipe: StatePipe<State>?
        /// The next synchronous run's number (used only when observed).
        var nextSyncRunID: UInt64 = 0
    }

    init(index: Int, feedback: Feedback<State, Event>, core: LoopCore<State, Event>) {
        self.index = index
        self.takesLatestOnly = feedback.delivery == .latestState
        // Under a manual drive (SpindleTesting's runner) no queue is used:
        // the feedback runs where the loop's slice runs.
        self.queue = feedback.runsOnReducerThread || core.manualDrive != nil ? nil : feedback.queue
        self.core = core
        self.filter = feedback.filter
        self.reports = core.hub == nil ? nil : OrderedReports()
        if case .sync(let effect) = feedback.effect {
            syncEffect = effect
        } else {
            syncEffect = nil
        }
        if queue == nil, syncEffect != nil {
            (kept, mailboxLock, runsLock, stoppingFlag) = (nil, nil, nil, nil)
        } else {
            kept = KeptFeedback(feedback)
            (mailboxLock, runsLock, stoppingFlag) = (Lock(Mailbox()), Lock(Runs()), ManagedAtomic(false))
        }
        if queue == nil, let writingInto = feedback.syncEffectWritingInto {
            syncEffectWritingInto = writingInto
            eventScratch = .allocate(
                byteCount: Swift.max(1, MemoryLayout<Event>.size), alignment: MemoryLayout<Event>.alignment)
        } else {
            syncEffectWritingInto = { _, _ in false }
            eventScratch = nil
        }
        if case .stream = feedback.effect {
            let (states, input) = AsyncStream<State>.makeStream(
                bufferingPolicy: feedback.streamBufferLimit.map { .bufferingNewest($0) } ?? .unbounded)
            (streamStates, streamInput) = (states, input)
        } else {
            (streamStates, streamInput) = (nil, nil)
        }
        if syncEffect == nil, let taskQueue = queue ?? core.executorQueue {
            taskExecutor = QueueTaskExecutor(queue: taskQueue)
        } else {
            taskExecutor = nil
        }
        LiveCounts.feedbackWorkers.wrappingIncrement(ordering: .relaxed)
    }

    deinit {
        eventScratch?.deallocate()
        LiveCounts.feedbackWorkers.wrappingDecrement(ordering: .relaxed)
    }

    /// Subscribes an attached feedback (gear). Called once at loop start.
    func attach() {
        guard case .attached(let subscribe) = feedback.effect else { return }
        let emitter = EffectEmitter<Event> { [core] event in core.emitFromEffect(event) }
        let subscription = subscribe(emitter)
        let lateStop = runs.withLock { runs -> Bool in
            if runs.stopped { return true }
            runs.attachment = subscription
            return false
        }
        if lateStop { subscription.cancel() }
    }

    /// Queues a batch of states for the feedback's queue (only the last one
    /// when it takes the latest state). Runner only.
    func deliver(_ states: UnsafeBufferPointer<State>) {
        core.assertOnRunner()
        if takesLatestOnly {
            if let last = states.last { deliverLatest(last) }
            return
        }
        post { $0.pending.append(copying: states) }
    }

    /// Hands the latest state to a feedback that takes only the latest: it
    /// replaces the state waiting in the mailbox, if any — but never the
    /// initial state, which the feedback always gets first. Runner only.
    func deliverLatest(_ state: State) {
        core.assertOnRunner()
        post { mailbox in
            if mailbox.initialPending, !mailbox.pending.isEmpty {
                let initial = mailbox.pending.removeFirst()
                mailbox.pending.removeAll()
                mailbox.pending.append(initial)
            } else {
                mailbox.pending.removeAll()
            }
            mailbox.pending.append(state)
        }
    }

    // Fills the mailbox under its lock (unless stopped) and schedules one
    // drain on the queue when none is scheduled. Runner only.
    private func post(_ fill: (inout Mailbox) -> Void) {
        let schedule = mailbox.withLock { mailbox -> Bool in
            guard !mailbox.stopped else { return false }
            fill(&mailbox)
            if mailbox.scheduled { return false }
            mailbox.scheduled = true
            return true
        }
        if schedule, let queue { queue.async { self.drainMailbox() } }
    }

    /// Handles one state on the loop's runner (a feedback with no queue).
    /// Runner only.
    /// `unobserved`: the loop has no observer (its `hub` is nil), which the
    /// caller knows without this worker loading its core.
    @inline(__always)
    func runInline(_ state: State, unobserved: Bool) {
        core.assertOnRunner()
        guard let scratch = eventScratch, unobserved else {
            runInlineGeneral(state)
            return
        }
        if let filter, !filter(state) { return }
        if syncEffectWritingInto(state, scratch) {
            _ = core.emit(scratch.assumingMemoryBound(to: Event.self).move())
        }
    }

    // Every other inline run: an observed loop, a sync effect made by a
    // form other than `Feedback(effect:)`, an async or stream effect. Not
    // inlined: its `Event?` result makes the function that holds it ask for
    // `Optional<Event>`'s metadata on entry, whichever path it takes.
    @inline(never)
    private func runInlineGeneral(_ state: State) {
        guard let syncEffect else {
            handle(state)
            return
        }
        if let filter, !filter(state) { return }
        // Spelled out rather than through runSync: this runs after every
        // reduction, and the extra call and closure were measurable.
        if let hub = core.hub {
            runSyncObserved(syncEffect, state, hub: hub)
        } else if let event = syncEffect(state) {
            _ = core.emit(event)
        }
    }

    // A synchronous run on the worker's one runner (earlier runs have
    // returned), reported to the loop's observers if any.
    private func runSync(_ effect: @Sendable (State) -> Event?, _ state: State) {
        if let hub = core.hub {
            runSyncObserved(effect, state, hub: hub)
        } else if let event = effect(state) {
            core.emitFromEffect(event)
        }
    }

    private func runSyncObserved(
        _ effect: @Sendable (State) -> Event?, _ state: State, hub: ObserverHub<State, Event>
    ) {
        let run = EffectRun(feedbackIndex: index, id: runnerOwned.nextSyncRunID)
        runnerOwned.nextSyncRunID &+= 1
        hub.effectStarted(run)
        if let event = effect(state), core.emitFromEffect(event) {
            hub.effectEmitted(event, from: run)
        }
        hub.effectFinished(run)
    }

    /// Stops the worker: no further runs, every live run cancelled, the gear
    /// detached. Events emitted by runs afterwards are discarded. Runner only.
    ///
    /// - Parameter drained: called once no drain of the feedback's queue is
    ///   running any more (at once when none is), so that the loop's stop
    ///   returns only after the last effect call it could not prevent.
    func stop(whenDrained drained: @escaping @Sendable () -> Void) {
        core.assertOnRunner()
        guard let stoppingFlag else {
            // A sync effect called inline: no run, drain or subscription
            // to end; its calls are the runner's, which is here.
            reports?.drain()
            drained()
            return
        }
        stoppingFlag.store(true, ordering: .sequentiallyConsistent)
        // Waits for a running drain of the queue and for the attachment's
        // code (an effect router's handler call), each a party.
        let parts = Countdown(1, action: drained)
        mailbox.withLock { mailbox in
            mailbox.stopped = true
            mailbox.pending.removeAll()
            // A drain scheduled but not running yet will see the stop
            // before any effect call: only a running one is waited for.
            if mailbox.running {
                parts.add()
                mailbox.onDrained = parts.done
            }
        }
        let (cancelled, attachment) = runs.withLock { runs in
            runs.stopped = true
            runs.generation &+= 1
            let cancelled = cancelLive(&runs)
            let attachment = runs.attachment
            runs.attachment = nil
            let pipe = runs.pipe
            runs.pipe = nil
            if let run = runs.pipeRun { reportPipeEnded(run) }
            runs.pipeRun = nil
            return (cancelled, (attachment, pipe))
        }
        reports?.drain()
        streamInput?.finish()
        for task in cancelled { task.cancel() }
        if let subscription = attachment.0 {
            parts.add()
            subscription.cancel(whenDone: parts.done)
        }
        attachment.1?.close()
        parts.done()
    }

    // Under the `runs` lock: takes every live run out (a cancelled run's
    // later events are discarded by the generation check), counts it and
    // tells the observers, in id order; returns the tasks to cancel once the
    // lock is released.
    private func cancelLive(_ runs: inout Runs) -> [Task<Void, Never>] {
        guard !runs.live.isEmpty else { return [] }
        let (tasks, ids) = runs.live.cancelAll()
        if let reports, let hub = core.hub {
            for id in ids {
                let run = EffectRun(feedbackIndex: index, id: id)
                reports.append { hub.effectCancelled(run) }
            }
        }
        core.counters.runsCancelled.wrappingIncrement(by: ids.count, ordering: .relaxed)
        return tasks
    }

    /// Crashes in debug builds when called off the feedback's queue (the
    /// mailbox's drain side has one runner: the queue); checked where the
    /// queue enters, `drainMailbox`. Free in release.
    @inline(__always)
    private func assertOnQueue() {
        #if DEBUG
        if let queue { dispatchPrecondition(condition: .onQueue(queue)) }
        #endif
    }

    // On `queue`: handle everything queued, then give the queue back. A
    // stop ends it before the next state (checked before each effect call)
    // and learns when it has left.
    private func drainMailbox() {
        assertOnQueue()
        while true {
            if takeBatch() {
                while !runnerOwned.draining.isEmpty {
                    let state = runnerOwned.draining.removeFirst()
                    if stopping.load(ordering: .sequentiallyConsistent) {
                        runnerOwned.draining.removeAll()
                        break
                    }
                    handle(state)
                }
                continue
            }
            let (idle, onDrained) = mailbox.withLock { mailbox -> (Bool, (@Sendable () -> Void)?) in
                guard mailbox.pending.isEmpty || mailbox.stopped else { return (false, nil) }
                mailbox.scheduled = false
                mailbox.running = false
                defer { mailbox.onDrained = nil }
                return (true, mailbox.onDrained)
            }
            if idle {
                onDrained?()
                return
            }
        }
    }

    // Moves the queued states into `draining`; false when there are none.
    private func takeBatch() -> Bool {
        mailbox.withLock { mailbox -> Bool in
            // Under the lock that `stop` takes after raising `stopping`:
            // either the stop sees this drain running and waits for it, or
            // the drain sees `stopping` before its first effect call.
            mailbox.running = true
            if mailbox.pending.isEmpty || mailbox.stopped { return false }
            mailbox.initialPending = false
            mailbox.pending.exchange(with: &runnerOwned.draining)
            return true
        }
    }

    private func handle(_ state: State) {
        // A discarding stop ends deliveries at once: states queued for this
        // worker before it are dropped, not handed to the effect.
        if core.stopRequest.load(ordering: .relaxed) == .discard { return }
        if let filter, !filter(state) { return }
        if let syncEffect {
            runSync(syncEffect, state)
            return
        }
        switch feedback.effect {
        case .sync:
            preconditionFailure("Spindle: a sync effect runs through syncEffect")
        case .async(let effect):
            startRun { emitter in
                if let event = try await effect(state) { _ = await emitter.send(event) }
            }
        case .sequence(let body):
            startRun { emitter in try await body(state, emitter) }
        case .stream(let body):
            if !runnerOwned.streamStarted, let stream = streamStates, let input = streamInput {
                runnerOwned.streamStarted = true
                let states = core.manualDrive.map { $0.reporting(stream) } ?? stream
                startRun { emitter in
                    // A run that ends early takes no more states.
                    defer { input.finish() }
                    try await body(states, emitter)
                }
            }
            streamInput?.yield(state)
        case .pipe(let open):
            if runnerOwned.pipe == nil { openPipe(open) }
            runnerOwned.pipe?.send(state)
        case .source(let body):
            if !runnerOwned.streamStarted {
                runnerOwned.streamStarted = true
                startRun { emitter in try await body(emitter) }
            }
        case .attached:
            break
        case .merged:
            preconditionFailure("Spindle: a spin flattens merged feedbacks")
        case .perStart:
            preconditionFailure("Spindle: a start makes per-start feedbacks before its loop runs")
        }
    }

    // Starts a run of an async, sequence or stream effect: cancels the
    // previous runs (`.cancelOnNewState`), then calls the effect at once, on
    // this thread (`Task.immediate`), up to its first suspension; the rest
    // of the task runs on `taskExecutor`. So effects are called in state
    // order, and a run is never called after a newer state's run or after
    // its own cancellation: both happen on this, the worker's one runner,
    // after the call. Runner only (the loop's runner, or the queue's drain).
    private func startRun(_ body: @escaping @Sendable (EffectEmitter<Event>) async throws -> Void) {
        let cancelPrevious = feedback.strategy == .cancelOnNewState
        let hub = core.hub
        let begun: (run: EffectRun, generation: UInt64, cancelled: [Task<Void, Never>])? = runs.withLock { runs in
            guard !runs.stopped else { return nil }
            var cancelled: [Task<Void, Never>] = []
            if cancelPrevious {
                runs.generation &+= 1
                cancelled = cancelLive(&runs)
            }
            let id = runs.nextID
            runs.nextID &+= 1
            let run = EffectRun(feedbackIndex: index, id: id)
            runs.live.enter(id)
            core.counters.runsStarted.wrappingIncrement(ordering: .relaxed)
            // Observers hear of a run's start, cancellation and end in the
            // order this lock decides them.
            if let reports, let hub { reports.append { hub.effectStarted(run) } }
            return (run, runs.generation, cancelled)
        }
        guard let (run, generation, cancelled) = begun else { return }
        reports?.drain()
        for task in cancelled { task.cancel() }
        let emitter = emitter(generation: generation, run: run)
        LiveCounts.effectTasks.wrappingIncrement(ordering: .relaxed)
        let manual = core.manualDrive
        // No lock is held here: the effect's first part runs now, and may
        // emit (which takes the `runs` lock).
        let task = Task.immediate(executorPreference: manual?.taskExecutor ?? taskExecutor) { [self] in
            defer { LiveCounts.effectTasks.wrappingDecrement(ordering: .relaxed) }
            do {
                if let manual {
                    try await manual.wrapRun(run) { try await body(emitter) }
                } else {
                    try await body(emitter)
                }
            } catch {
                if !(error is CancellationError), !Task.isCancelled {
                    hub?.effectFailed(run, error: error)
                    core.report(EffectError(feedbackIndex: index, underlying: error))
                }
            }
            self.finished(run)
        }
        let cancelNow = runs.withLock { $0.live.register(task, for: run.id) }
        if cancelNow { task.cancel() }
    }

    // Opens a pipe feedback's pipe, once, with the first state: one run
    // for the loop's life, whose events are discarded once the loop stops.
    // Runner only.
    private func openPipe(_ open: @Sendable (EffectEmitter<Event>) -> StatePipe<State>) {
        let begun: (run: EffectRun, generation: UInt64)? = runs.withLock { runs in
            guard !runs.stopped else { return nil }
            let run = EffectRun(feedbackIndex: index, id: runs.nextID)
            runs.nextID &+= 1
            core.counters.runsStarted.wrappingIncrement(ordering: .relaxed)
            if let reports, let hub = core.hub { reports.append { hub.effectStarted(run) } }
            return (run, runs.generation)
        }
        guard let (run, generation) = begun else { return }
        reports?.drain()
        let pipe = open(emitter(generation: generation, run: run))
        runnerOwned.pipe = pipe
        let closeNow = runs.withLock { runs -> Bool in
            if runs.stopped {
                // The stop came between the two locks: it did not see this run.
                reportPipeEnded(run)
                return true
            }
            runs.pipe = pipe
            runs.pipeRun = run
            return false
        }
        reports?.drain()
        if closeNow { pipe.close() }
    }

    // Under the `runs` lock: a pipe's one run ends with the pipe, at the
    // stop; observers hear it cancelled and finished, as every run they
    // heard start (made once the lock is released, by `reports.drain()`).
    private func reportPipeEnded(_ run: EffectRun) {
        guard let reports, let hub = core.hub else { return }
        reports.append { hub.effectCancelled(run) }
        reports.append { hub.effectFinished(run) }
    }

    // The emitter of one run: its events count only while `generation` is
    // current (under `.cancelOnNewState`) and the worker is not stopped.
    private func emitter(generation: UInt64, run: EffectRun) -> EffectEmitter<Event> {
        EffectEmitter(
            emit: { [self] event in self.emit(event, generation: generation, run: run) },
            send: { [self] event in await self.send(event, generation: generation, run: run) })
    }

    private func finished(_ run: EffectRun) {
        runs.withLock { runs in
            runs.live.finish(run.id)
            if let reports, let hub = core.hub { reports.append { hub.effectFinished(run) } }
        }
        reports?.drain()
    }

    // Any thread: a run's event, from synchronous code. Enqueued under the
    // lock, so a cancellation (which takes the same lock) either precedes it
    // (discarded) or follows it. A full `.block` queue is waited for outside
    // the lock; observers hear of the event after it.
    private func emit(_ event: Event, generation: UInt64, run: EffectRun) -> Bool {
        while true {
            switch tryEmit(event, generation: generation, run: run) {
            case .accepted: return true
            case .refused, .late: return false
            case .full: core.waitForSpace()
            }
        }
    }

    // The same from a run's task: a full `.block` queue suspends the task
    // instead of blocking its (maybe cooperative) thread.
    private func send(_ event: Event, generation: UInt64, run: EffectRun) async -> Bool {
        while true {
            switch tryEmit(event, generation: generation, run: run) {
            case .accepted: return true
            case .refused, .late: return false
            case .full: await core.waitForSpaceSuspending()
            }
        }
    }

    /// False, but for a test that injected `InjectedFault.acceptLateEvents`
    /// (debug builds only).
    private static var lateEventsAccepted: Bool {
        #if DEBUG
        InjectedFault.current == .acceptLateEvents
        #else
        false
        #endif
    }

    private func tryEmit(_ event: Event, generation: UInt64, run: EffectRun) -> RunEmit {
        let cancelOnNewState = feedback.strategy == .cancelOnNewState
        let hub = core.hub
        let outcome = runs.withLock { runs -> RunEmit in
            if runs.stopped || (cancelOnNewState && runs.generation != generation && !Self.lateEventsAccepted) {
                core.counters.lateEventsDiscarded.wrappingIncrement(ordering: .relaxed)
                if let reports, let hub { reports.append { hub.lateEventDiscarded(event, from: run) } }
                return .late
            }
            let attempt = core.emitUnreportedWithoutWaiting(event)
            if let reports, let hub {
                switch attempt {
                case .accepted:
                    reports.append { [core] in
                        core.report(.accepted, of: event, to: hub)
                        hub.effectEmitted(event, from: run)
                    }
                case .dropped: reports.append { [core] in core.report(.dropped, of: event, to: hub) }
                case .stopped: reports.append { [core] in core.report(.stopped, of: event, to: hub) }
                case .full: break
                }
            }
            switch attempt {
            case .accepted: return .accepted
            case .dropped, .stopped: return .refused
            case .full: return .full
            }
        }
        reports?.drain()
        return outcome
    }
}

/// A feedback kept by its worker (see `FeedbackWorker.kept`).
final class KeptFeedback<State: Sendable, Event: Sendable>: Sendable {
    let feedback: Feedback<State, Event>

    init(_ feedback: Feedback<State, Event>) {
        self.feedback = feedback
    }
}
