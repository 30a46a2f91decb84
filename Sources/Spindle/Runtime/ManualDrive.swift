/// How SpindleTesting's runner drives a loop of the real engine: every slice,
/// effect task, route drain and error report is a job the runner runs on the
/// test's own thread, one at a time; nothing runs on a real queue or thread
/// of the engine's. Package only: given with
/// ``SpinExecutor/manual(name:drive:enqueue:)``.
///
/// Under a manual drive the engine's semantics are unchanged (the same
/// workers, router and queue), except where it would otherwise leave the
/// test's control:
/// - a feedback's `on:` queue is not used: its effect runs where the
///   loop's slice runs, as `executeOnReducerThread()`;
/// - effect tasks run on ``taskExecutor``, route drains and the reports of
///   unhandled effects through ``dispatch``;
/// - the runner's own emits (inline feedbacks) move from its local queue
///   to the loop's custom queue once per slice instead of being reduced in
///   that slice, so that one event at a time can be reduced (`maxBatch` 1)
///   in the order the queue decides.
///
/// The remaining hooks tell the runner what the observers do not: which
/// task is which run, when a stream run waits for its next state, and how
/// the router routed each effect.
///
/// A class: a loop reaches it through its executor, and an effect router
/// keeps it, at the cost of one reference each.
///
/// **Thread safety:** `Sendable` (immutable); the hooks are called from the
/// threads the runner's executors run (its own), and from emitting threads.
package final class ManualDrive: Sendable {
    /// One effect of a reduction, as the loop's effect router routed it.
    package struct RoutedEffect: Sendable {
        /// The effect's number among every effect the loop dispatched, from 0.
        package let number: Int
        package let effect: any Sendable
        /// The route that claims it (the first, in the order routes were
        /// added); nil: no route claims it (unhandled).
        package let route: Int?
        /// Set when more than one route claims it.
        package let ambiguity: AmbiguousEffectRouteError?
    }

    /// Where every effect task runs: feedback runs and async route handlers.
    package let taskExecutor: any TaskExecutor
    /// Runs work the engine would put on a dispatch queue: a route's drain,
    /// the report of unhandled and ambiguous effects.
    package let dispatch: @Sendable (@escaping @Sendable () -> Void) -> Void
    /// Wraps the body of every effect task, inside the task.
    package let wrapRun: @Sendable (EffectRun, @escaping @Sendable () async throws -> Void) async throws -> Void
    /// Called with true as a stream feedback's run starts waiting for its
    /// next state, and with false once it has it (or the stream ended).
    package let waitingForState: @Sendable (Bool) -> Void
    /// One reduction's effects, in the order the reducer listed them, as
    /// routed; on the loop's runner, before any of them is handled.
    package let effectsRouted: @Sendable ([RoutedEffect]) -> Void
    /// A route's drain took an effect: the handler run and the effect's
    /// number (see ``RoutedEffect/number``), before the handler is called.
    package let handlerTaken: @Sendable (EffectRun, _ effectNumber: Int) -> Void

    package init(
        taskExecutor: any TaskExecutor,
        dispatch: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
        wrapRun: @escaping @Sendable (EffectRun, @escaping @Sendable () async throws -> Void) async throws -> Void,
        waitingForState: @escaping @Sendable (Bool) -> Void,
        effectsRouted: @escaping @Sendable ([RoutedEffect]) -> Void,
        handlerTaken: @escaping @Sendable (EffectRun, _ effectNumber: Int) -> Void
    ) {
        self.taskExecutor = taskExecutor
        self.dispatch = dispatch
        self.wrapRun = wrapRun
        self.waitingForState = waitingForState
        self.effectsRouted = effectsRouted
        self.handlerTaken = handlerTaken
    }

    /// `states`, read through the waiting hook: a stream run that waits
    /// for its next state says so.
    func reporting<State: Sendable>(_ states: AsyncStream<State>) -> AsyncStream<State> {
        let iterator = StreamReader(states)
        let waiting = waitingForState
        return AsyncStream(unfolding: {
            waiting(true)
            defer { waiting(false) }
            return await iterator.next()
        })
    }
}
