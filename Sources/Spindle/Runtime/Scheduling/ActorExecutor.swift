internal import Atomics
internal import CSpindle

/// Runs a loop isolated to an actor: the main actor, an actor of the app, or
/// the actor Spindle makes around a `SerialExecutor` (an event loop's, a
/// queue's). Each scheduling is one job on the actor, so a slice is
/// serialized with the actor's other work, and a sync feedback may
/// `assumeIsolated` on it. Like a serial queue's work item, a slice never
/// lingers: the actor's other work comes first.
///
/// A scheduling is a task started with `Task.immediate` that switches to the
/// actor: for an actor with an executor of its own (the main actor, a
/// `SerialExecutor`) that enqueues one job on that executor, with no hop
/// through the cooperative pool. A default actor's jobs run on the
/// cooperative pool anyway.
///
/// **Thread safety:** `schedule` from any thread (once per `idle →
/// scheduled` edge, as every executor); the slice runs isolated to `actor`.
final class ActorExecutor: LoopExecutor {
    let actor: any Actor
    let name: String
    /// atomic: the thread inside `schedule`'s `Task.immediate` call, 0
    /// outside it. Should the runtime switch into the actor on that very
    /// thread (it may, for a free default actor), the job yields first: a
    /// slice runs user code, which `schedule` must never do (the emit that
    /// called it may be inside its gate section).
    private let schedulingThread = UnsafeAtomic<UInt>.create(0)

    init(actor: any Actor, name: String) {
        self.actor = actor
        self.name = name
    }

    deinit { schedulingThread.destroy() }

    func register(_ loop: ScheduledLoop) throws(SpinExecutorError) {}

    func loopFinished(_ loop: ScheduledLoop) {}

    func schedule(_ loop: ScheduledLoop) {
        let token = currentThreadToken()
        schedulingThread.store(token, ordering: .relaxed)
        Task.immediate { [self, actor] in await run(loop, on: actor) }
        // Unless the next scheduling's thread has stored its own token (the
        // job may have run, and the loop gone idle and been woken, by now).
        _ = schedulingThread.compareExchange(expected: token, desired: 0, ordering: .relaxed)
    }

    /// One scheduling of `loop`, isolated to `actor`; a loop with work left
    /// is scheduled again, behind the actor's other jobs.
    private func run(_ loop: ScheduledLoop, on actor: isolated any Actor) async {
        // Relaxed: only this thread's own store can equal its token.
        if schedulingThread.load(ordering: .relaxed) == currentThreadToken() {
            await Task.yield()
        }
        if case .reschedule = loop.runScheduling(linger: { false }) {
            schedule(loop)
        }
    }
}

/// The actor Spindle puts around a `SerialExecutor` passed to
/// ``SpinExecutor/serialExecutor(_:)``: its jobs run on that executor.
actor SerialExecutorActor {
    let executor: any SerialExecutor

    init(executor: any SerialExecutor) {
        self.executor = executor
    }

    nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }
}

/// Hands each scheduling of a loop to `enqueue` as one closure, which must
/// run it later, once, on a serial context of its own (SpindleNIO: an event
/// loop's `execute`, cheaper than a task switching to the event loop's
/// executor). As an actor's job, a slice never lingers.
///
/// With `isCurrent` (SpindleNIO: the event loop's `inEventLoop`), an emit
/// made on that context outside every slice runs the loop's scheduling at
/// once, in the emit (the inline fast path): no task, and a message read on
/// the event loop is reduced, and its reply written, in the same read.
///
/// **Thread safety:** `schedule` from any thread; `enqueue` must never run
/// the closure before it returns (a scheduling runs no user code).
final class EnqueuingExecutor: LoopExecutor {
    let enqueue: @Sendable (@escaping @Sendable () -> Void) -> Void
    let isCurrent: (@Sendable () -> Bool)?
    let name: String
    /// SpindleTesting's runner: see ``ManualDrive``.
    let manualDrive: ManualDrive?

    init(
        name: String, isCurrent: (@Sendable () -> Bool)?, manualDrive: ManualDrive? = nil,
        enqueue: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) {
        self.name = name
        self.isCurrent = isCurrent
        self.manualDrive = manualDrive
        self.enqueue = enqueue
    }

    func runsHere() -> Bool {
        guard let isCurrent, isCurrent() else { return false }
        return !spindle_thread_in_slice()
    }

    var mayRunHere: Bool { isCurrent != nil }

    func register(_ loop: ScheduledLoop) throws(SpinExecutorError) {}

    func loopFinished(_ loop: ScheduledLoop) {}

    func schedule(_ loop: ScheduledLoop) {
        enqueue { [self] in
            if case .reschedule = loop.runScheduling(linger: { false }) {
                schedule(loop)
            }
        }
    }
}
