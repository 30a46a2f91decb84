internal import Atomics
import Dispatch

/// One loop's runtime of an ``EffectRouter``: route queues, pending effects,
/// running handler tasks.
///
/// The reducer thread routes each reduction's effects (the routes'
/// extractors run there) and appends them, under the lock, to their routes'
/// mailboxes, scheduling a drain on a route's queue only when none is
/// scheduled. A drain takes one effect at a time under the lock, so stop,
/// which empties the mailboxes under the same lock, sees every effect either
/// taken (handled) or pending (discarded and counted): none is lost, none is
/// counted twice.
///
/// Every handler is called by its route's drain, in dispatch order: a
/// synchronous one whole, an async one as a `Task.immediate` up to its first
/// suspension (entered as `.starting` under the lock first, registered
/// after, so that stop cancels every task whose handler was called). Stop
/// waits (through its `done` callback, not by blocking) for a drain that is
/// calling a handler, or for the report of an unhandled effect, so that no
/// handler is called, and no error of an effect dispatched before the stop
/// is reported, after the loop's stop returns. No user code runs under the
/// lock: observers hear of runs through `reports`, in the order the lock
/// decided.
///
/// Thread safety: `connect` once before the loop's reducer thread starts;
/// `dispatch` and `stop` on the reducer thread; drains on the route queues;
/// handler emits on any thread.
final class EffectDispatcher<Effect: Sendable, Event: Sendable>: Sendable {
    private struct Pending: Sendable {
        let effect: Effect
        let job: EffectJob<Event>
        /// The effect's number among every effect dispatched (counted only
        /// under a manual drive; 0 otherwise).
        var number = 0
    }

    /// A route's effects waiting for its queue, oldest at `head`.
    private struct Mailbox {
        var effects: [Pending] = []
        var head = 0
        var scheduled = false

        var count: Int { effects.count - head }

        mutating func popFirst() -> Pending? {
            guard head < effects.count else { return nil }
            let first = effects[head]
            head += 1
            if head == effects.count { removeAll() }
            return first
        }

        mutating func removeAll() {
            effects.removeAll(keepingCapacity: true)
            head = 0
        }
    }

    private struct Runtime {
        var mailboxes: [Mailbox]
        var stopped = false
        /// The async handlers' runs (see `StartingRuns`).
        var tasks = StartingRuns()
        var nextTaskID: UInt64 = 0
        /// Effects dispatched so far (counted only under a manual drive).
        var dispatchedEffects = 0
        /// Drains calling a handler (from taking its effect to the end of a
        /// synchronous handler, or an async one's first suspension), and
        /// reports of unhandled effects not yet made (`report`).
        var calling = 0
        /// Stop's `done`, once the last call in progress at the stop ends.
        var onCallsEnded: (@Sendable () -> Void)?
    }

    private let router: EffectRouter<Effect, Event>
    private let queues: [DispatchQueue]
    /// Per route: the task executor of an async handler's code after its
    /// first suspension, the route's queue when the user named it (`on:` or
    /// the loop's `SpinExecutor.queue`, as for feedbacks); nil (the global
    /// executor) for a route's own queue.
    private let taskExecutors: [QueueTaskExecutor?]
    // protected by lock: the mailboxes, the stop flag, the live tasks, the
    // calls in progress.
    private let runtime: Lock<Runtime>
    /// The observers' effect-run calls, appended under the `runtime` lock
    /// and made after it is released, in that order.
    private let reports = OrderedReports()
    /// atomic: set by stop (after `runtime.stopped`), read by handler emits
    /// without the lock.
    private let stopped = ManagedAtomic<Bool>(false)
    // Set once by `connect`, while the loop is built and before its start
    // schedules it: every reader runs in one of its slices or in work a
    // slice scheduled, and the start's scheduling (the executor's queue
    // push, release; the runner's pop, acquire) orders the store before
    // every read. Hence `nonisolated(unsafe)`, for this one property.
    nonisolated(unsafe) private var port: LoopPort<Event>?

    init(router: EffectRouter<Effect, Event>, defaultQueue: DispatchQueue?) {
        self.router = router
        queues = router.routes.enumerated().map { index, route in
            route.queue ?? defaultQueue ?? DispatchQueue(label: "spindle.effect-route.\(index)")
        }
        taskExecutors = router.routes.map { route in (route.queue ?? defaultQueue).map(QueueTaskExecutor.init) }
        runtime = Lock(Runtime(mailboxes: Array(repeating: Mailbox(), count: router.routes.count)))
        LiveCounts.effectRouters.wrappingIncrement(ordering: .relaxed)
    }

    deinit {
        LiveCounts.effectRouters.wrappingDecrement(ordering: .relaxed)
    }

    func connect(_ port: LoopPort<Event>) {
        precondition(self.port == nil, "Spindle: an effect runtime serves one loop")
        self.port = port
    }

    // MARK: The loop's runner

    /// Routes one reduction's effects, in order. On the loop's runner only.
    func dispatch(_ effects: [Effect]) {
        let port = port!
        port.counters.effectsDispatched.wrappingIncrement(by: effects.count, ordering: .relaxed)
        // Under a manual drive, each effect's number and route, for the runner.
        let manual = port.manual
        var number = manual == nil ? 0 : firstNumber(of: effects.count)
        var routed: [ManualDrive.RoutedEffect] = []
        var claimed: [(route: Int, pending: Pending)] = []
        var misrouted: [any Error] = []
        for effect in effects {
            let claim = router.claim(effect)
            if let (index, job) = claim.handler {
                claimed.append((index, Pending(effect: effect, job: job, number: number)))
            } else {
                port.counters.unhandledEffects.wrappingIncrement(ordering: .relaxed)
                misrouted.append(UnhandledEffectError(effect: effect, router: router.name))
            }
            if let ambiguity = claim.ambiguity {
                misrouted.append(ambiguity)
            }
            if manual != nil {
                routed.append(.init(number: number, effect: effect, route: claim.handler?.0, ambiguity: claim.ambiguity))
                number += 1
            }
        }
        manual?.effectsRouted(routed)
        if !claimed.isEmpty { enqueue(claimed, port: port) }
        if !misrouted.isEmpty { report(misrouted, port: port) }
    }

    // Under a manual drive: the number of the first of `count` effects
    // dispatched now (see `Pending.number`).
    private func firstNumber(of count: Int) -> Int {
        runtime.withLock { runtime -> Int in
            defer { runtime.dispatchedEffects += count }
            return runtime.dispatchedEffects
        }
    }

    private func enqueue(_ claimed: [(route: Int, pending: Pending)], port: LoopPort<Event>) {
        var schedule: [Int] = []
        let accepted = runtime.withLock { runtime -> Bool in
            guard !runtime.stopped else { return false }
            for (route, pending) in claimed {
                runtime.mailboxes[route].effects.append(pending)
                if !runtime.mailboxes[route].scheduled {
                    runtime.mailboxes[route].scheduled = true
                    schedule.append(route)
                }
            }
            return true
        }
        guard accepted else {
            port.counters.effectsDiscardedAtStop.wrappingIncrement(by: claimed.count, ordering: .relaxed)
            return
        }
        if let manual = port.manual {
            // One job per effect, each taking its route's oldest: handlers
            // are called in dispatch order across routes, one of the orders
            // the route queues allow.
            for (route, _) in claimed { manual.dispatch { self.drain(route, atMost: 1) } }
            return
        }
        for route in schedule { queues[route].async { self.drain(route) } }
    }

    // Unhandled and ambiguous effects, in dispatch order. Reported off the
    // reducer thread: the hook is user code. Counted as a call in progress
    // until the hook has heard of them: a stop that follows this dispatch
    // (on the same runner) returns only after, so the errors of every
    // effect dispatched before a stop are reported, and counted in
    // `effectErrors`, by the time it returns.
    private func report(_ errors: [any Error], port: LoopPort<Event>) {
        let name = router.name
        runtime.withLock { $0.calling += 1 }
        let reportAll: @Sendable () -> Void = { [self] in
            for error in errors {
                port.report(EffectError(feedbackIndex: port.feedbackIndex, router: name, underlying: error))
            }
            endCall()
        }
        if let manual = port.manual {
            manual.dispatch(reportAll)
        } else {
            DispatchQueue.global().async(execute: reportAll)
        }
    }

    /// Discards the pending effects (counted) and cancels the running
    /// handlers; later emits are rejected. Reducer thread, at stop.
    ///
    /// - Parameter done: called once no drain is calling a handler any more
    ///   (at once when none is), so that the loop's stop returns only after
    ///   the last handler call it could not prevent.
    func stop(whenDone done: @escaping @Sendable () -> Void) {
        let runs = port?.runs
        let feedbackIndex = port?.feedbackIndex ?? 0
        let (discarded, tasks, waits) = runtime.withLock { runtime -> (Int, [Task<Void, Never>], Bool) in
            runtime.stopped = true
            var discarded = 0
            for route in runtime.mailboxes.indices {
                discarded += runtime.mailboxes[route].count
                runtime.mailboxes[route].removeAll()
            }
            let (tasks, ids) = runtime.tasks.cancelAll()
            if let runs {
                for id in ids { reports.append { runs.cancelled(EffectRun(feedbackIndex: feedbackIndex, id: id)) } }
            }
            guard runtime.calling > 0 else { return (discarded, tasks, false) }
            runtime.onCallsEnded = done
            return (discarded, tasks, true)
        }
        stopped.store(true, ordering: .releasing)
        port?.counters.effectsDiscardedAtStop.wrappingIncrement(by: discarded, ordering: .relaxed)
        reports.drain()
        for task in tasks { task.cancel() }
        if !waits { done() }
    }

    // MARK: Route queues

    /// On `queues[route]`: calls the route's handlers one by one, in order.
    /// `atMost`: under a manual drive, one effect per drain (see `enqueue`).
    private func drain(_ route: Int, atMost limit: Int = .max) {
        let port = port!
        var taken = 0
        while taken < limit, let (pending, run) = take(route, port: port) {
            taken += 1
            port.manual?.handlerTaken(run, pending.number)
            reports.drain()
            switch pending.job {
            case .sync(let handler):
                // Its event before its end, as a feedback's sync run.
                if let event = handler() { _ = emit(event, port: port, run: run) }
                runtime.withLock { _ in if let runs = port.runs { reports.append { runs.finished(run) } } }
                reports.drain()
            case .async(let body):
                start(body, run: run, effect: pending.effect, route: route, port: port)
            }
            endCall()
        }
    }

    // Takes the route's next effect, or ends the drain (nil). Each handler
    // call gets a run number; observers hear of its start, cancellation and
    // end in the order this lock decides them.
    private func take(_ route: Int, port: LoopPort<Event>) -> (Pending, EffectRun)? {
        runtime.withLock { runtime -> (Pending, EffectRun)? in
            guard !runtime.stopped, let pending = runtime.mailboxes[route].popFirst() else {
                runtime.mailboxes[route].scheduled = false
                return nil
            }
            port.counters.effectsHandled.wrappingIncrement(ordering: .relaxed)
            let id = runtime.nextTaskID
            runtime.nextTaskID &+= 1
            let run = EffectRun(feedbackIndex: port.feedbackIndex, id: id)
            if let runs = port.runs { reports.append { runs.started(run) } }
            runtime.calling += 1
            if case .async = pending.job { runtime.tasks.enter(id) }
            return (pending, run)
        }
    }

    // A drain's handler call is over: the last one a stop waits for
    // completes it.
    private func endCall() {
        let callsEnded = runtime.withLock { runtime -> (@Sendable () -> Void)? in
            runtime.calling -= 1
            guard runtime.calling == 0, let done = runtime.onCallsEnded else { return nil }
            runtime.onCallsEnded = nil
            return done
        }
        callsEnded?()
    }

    // Calls an async handler now, on the drain's thread, up to its first
    // suspension (`Task.immediate`), then registers its task: so handlers
    // are called in dispatch order, and a stop either finds the task
    // registered (and cancels it) or makes the registration cancel it.
    private func start(
        _ body: @escaping @Sendable (EventEmitter<Event>) async throws -> Void,
        run: EffectRun, effect: Effect, route: Int, port: LoopPort<Event>
    ) {
        let emitter = EventEmitter<Event> { [self] event in emit(event, port: port, run: run) }
        LiveCounts.effectTasks.wrappingIncrement(ordering: .relaxed)
        let manual = port.manual
        let task = Task.immediate(executorPreference: manual?.taskExecutor ?? taskExecutors[route]) { [self] in
            defer { LiveCounts.effectTasks.wrappingDecrement(ordering: .relaxed) }
            var failure: EffectHandlerError?
            do {
                if let manual {
                    try await manual.wrapRun(run) { try await body(emitter) }
                } else {
                    try await body(emitter)
                }
            } catch {
                if !(error is CancellationError), !Task.isCancelled {
                    failure = EffectHandlerError(effect: effect, routeIndex: route, router: router.name, underlying: error)
                }
            }
            runtime.withLock { runtime in
                runtime.tasks.finish(run.id)
                if let runs = port.runs {
                    if let failure { reports.append { runs.failed(run, failure) } }
                    reports.append { runs.finished(run) }
                }
            }
            reports.drain()
            if let failure {
                port.report(EffectError(feedbackIndex: port.feedbackIndex, router: router.name, underlying: failure))
            }
        }
        // Cancelled now if a stop took it out while its handler was called.
        let cancelNow = runtime.withLock { $0.tasks.register(task, for: run.id) }
        if cancelNow { task.cancel() }
    }

    // Any thread: a handler's event. After stop it is rejected here (or by
    // the loop, whose gate closed before this runtime stopped).
    private func emit(_ event: Event, port: LoopPort<Event>, run: EffectRun) -> EmitResult {
        if stopped.load(ordering: .acquiring) {
            port.counters.lateEventsDiscarded.wrappingIncrement(ordering: .relaxed)
            if let runs = port.runs {
                reports.append { runs.late(event, run) }
                reports.drain()
            }
            return .stopped
        }
        let result = port.emit(event)
        if result == .accepted, let runs = port.runs { runs.emitted(event, run) }
        return result
    }
}
