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
/// counted twice. Async handlers are launched under the lock too, so stop
/// cancels every task that was launched.
///
/// Thread safety: `connect` once before the loop's reducer thread starts;
/// `dispatch` and `stop` on the reducer thread; drains on the route queues;
/// handler emits on any thread.
final class EffectDispatcher<Effect: Sendable, Event: Sendable>: Sendable {
    private struct Pending: Sendable {
        let effect: Effect
        let job: EffectJob<Event>
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
        var tasks: [UInt64: Task<Void, Never>] = [:]
        var nextTaskID: UInt64 = 0
    }

    private let router: EffectRouter<Effect, Event>
    private let queues: [DispatchQueue]
    // protected by lock: the mailboxes, the stop flag, the live tasks.
    private let runtime: Lock<Runtime>
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
        var claimed: [(route: Int, pending: Pending)] = []
        var misrouted: [any Error] = []
        for effect in effects {
            let claim = router.claim(effect)
            if let (index, job) = claim.handler {
                claimed.append((index, Pending(effect: effect, job: job)))
            } else {
                port.counters.unhandledEffects.wrappingIncrement(ordering: .relaxed)
                misrouted.append(UnhandledEffectError(effect: effect, router: router.name))
            }
            if let ambiguity = claim.ambiguity {
                misrouted.append(ambiguity)
            }
        }
        if !claimed.isEmpty { enqueue(claimed, port: port) }
        if !misrouted.isEmpty { report(misrouted, port: port) }
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
        for route in schedule { queues[route].async { self.drain(route) } }
    }

    // Unhandled and ambiguous effects, in dispatch order. Reported off the
    // reducer thread: the hook is user code.
    private func report(_ errors: [any Error], port: LoopPort<Event>) {
        let name = router.name
        DispatchQueue.global().async {
            for error in errors {
                port.report(EffectError(feedbackIndex: port.feedbackIndex, router: name, underlying: error))
            }
        }
    }

    /// Discards the pending effects (counted) and cancels the running
    /// handlers; later emits are rejected. Reducer thread, at stop.
    func stop() {
        let (discarded, tasks) = runtime.withLock { runtime -> (Int, [Task<Void, Never>]) in
            runtime.stopped = true
            var discarded = 0
            for route in runtime.mailboxes.indices {
                discarded += runtime.mailboxes[route].count
                runtime.mailboxes[route].removeAll()
            }
            let tasks = Array(runtime.tasks.values)
            if let port, let runs = port.runs {
                for id in runtime.tasks.keys.sorted() {
                    runs.cancelled(EffectRun(feedbackIndex: port.feedbackIndex, id: id))
                }
            }
            runtime.tasks.removeAll()
            return (discarded, tasks)
        }
        stopped.store(true, ordering: .releasing)
        port?.counters.effectsDiscardedAtStop.wrappingIncrement(by: discarded, ordering: .relaxed)
        for task in tasks { task.cancel() }
    }

    // MARK: Route queues

    /// On `queues[route]`: handles the route's effects one by one, in order.
    private func drain(_ route: Int) {
        let port = port!
        while let taken = take(route, port: port) {
            guard !taken.launched, case .sync(let handler) = taken.pending.job else { continue }
            let event = handler()
            port.runs?.finished(taken.run)
            if let event { _ = emit(event, port: port, run: taken.run) }
        }
    }

    // Takes the route's next effect, or ends the drain (nil). An async
    // handler is launched here, under the lock (launched: true). Each
    // handler run gets a number; observers hear of its start here, and of
    // an async run's cancellation and end under the same lock, in order.
    private func take(_ route: Int, port: LoopPort<Event>) -> (pending: Pending, launched: Bool, run: EffectRun)? {
        runtime.withLock { runtime -> (pending: Pending, launched: Bool, run: EffectRun)? in
            guard !runtime.stopped, let pending = runtime.mailboxes[route].popFirst() else {
                runtime.mailboxes[route].scheduled = false
                return nil
            }
            port.counters.effectsHandled.wrappingIncrement(ordering: .relaxed)
            let id = runtime.nextTaskID
            runtime.nextTaskID &+= 1
            let run = EffectRun(feedbackIndex: port.feedbackIndex, id: id)
            port.runs?.started(run)
            guard case .async(let body) = pending.job else { return (pending, false, run) }
            runtime.tasks[id] = launch(body, run: run, effect: pending.effect, route: route, port: port)
            return (pending, true, run)
        }
    }

    // Called under the lock, so the task is registered before it can finish.
    private func launch(
        _ body: @escaping @Sendable (EventEmitter<Event>) async throws -> Void,
        run: EffectRun, effect: Effect, route: Int, port: LoopPort<Event>
    ) -> Task<Void, Never> {
        let emitter = EventEmitter<Event> { [self] event in emit(event, port: port, run: run) }
        LiveCounts.effectTasks.wrappingIncrement(ordering: .relaxed)
        return Task { [self] in
            defer { LiveCounts.effectTasks.wrappingDecrement(ordering: .relaxed) }
            do {
                try await body(emitter)
            } catch {
                if !(error is CancellationError), !Task.isCancelled {
                    let failure = EffectHandlerError(effect: effect, routeIndex: route, router: router.name, underlying: error)
                    port.runs?.failed(run, failure)
                    port.report(EffectError(feedbackIndex: port.feedbackIndex, router: router.name, underlying: failure))
                }
            }
            runtime.withLock { runtime in
                _ = runtime.tasks.removeValue(forKey: run.id)
                port.runs?.finished(run)
            }
        }
    }

    // Any thread: a handler's event. After stop it is rejected here (or by
    // the loop, whose gate closed before this runtime stopped).
    private func emit(_ event: Event, port: LoopPort<Event>, run: EffectRun) -> EmitResult {
        if stopped.load(ordering: .acquiring) {
            port.counters.lateEventsDiscarded.wrappingIncrement(ordering: .relaxed)
            port.runs?.late(event, run)
            return .stopped
        }
        return port.emit(event)
    }
}
