import Spindle

/// Runs the effects of a reducer with effects (`Reducer(_:effects:)`)
/// under a ``TestSpin``, as a loop's effect router does, but
/// deterministically.
///
/// The reducer routes each effect as the engine does (the first route, in
/// the order added, that claims it; see `Reducer.routedNext`). Then, for
/// each effect of a reduction, in order: the effect gets the next number
/// (its index in ``TestSpin/effects(as:)``) and its run is logged as
/// dispatched; an effect no route claims is logged as unhandled and kept in
/// ``unhandled``; an effect several routes claim is kept in ``ambiguous``
/// and handled by the first; a synchronous handler runs at once on the caller's
/// thread; an async or emitting handler is started as a task on the
/// ``EffectHost``'s executor, never overtaken (only ``TestSpin/stop()``
/// cancels it). Handler events join the same FIFO as feedback events.
/// After stop, a dispatched effect is logged as cancelled and not run.
///
/// **Thread safety:** ``dispatch(_:state:)`` from the runner's caller, one
/// call at a time; the queries from any thread. The effect list is behind a
/// lock; handlers never run under it.
final class RouterHost<State: Sendable, Event: Sendable>: Sendable {
    private struct Dispatched: Sendable {
        var effects: [any Sendable] = []
        var unhandled: [Int] = []
        var ambiguous: [AmbiguousEffectRouteError] = []
    }

    private let host: EffectHost<State, Event>
    // protected by lock: every effect dispatched, the unhandled ones, the
    // ambiguous ones.
    private let dispatched = Lock(Dispatched())

    init(host: EffectHost<State, Event>) {
        self.host = host
    }

    /// Every effect dispatched, in order.
    var effects: [any Sendable] { dispatched.withLock { $0.effects } }

    /// The effects no route claimed, in order.
    var unhandled: [any Sendable] {
        dispatched.withLock { books in books.unhandled.map { books.effects[$0] } }
    }

    /// The effects several routes claim, in order, as a loop reports them.
    var ambiguous: [AmbiguousEffectRouteError] { dispatched.withLock { $0.ambiguous } }

    /// Dispatches one reduction's effects, in order; `state` is the index of
    /// the state the reduction produced.
    func dispatch(_ effects: [RoutedEffect<Event>], state: Int) {
        for routed in effects {
            let number = dispatched.withLock { books -> Int in
                books.effects.append(routed.effect)
                if routed.route == nil { books.unhandled.append(books.effects.count - 1) }
                if let ambiguity = routed.ambiguity { books.ambiguous.append(ambiguity) }
                return books.effects.count - 1
            }
            let run = TestEffectRun(effect: number, route: routed.route, state: state)
            host.record(run, .dispatched(routed.effect))
            guard let handler = routed.handler else {
                host.record(run, .unhandled)
                continue
            }
            if host.isStopped {
                host.record(run, .cancelled)
                continue
            }
            switch handler {
            case .sync(let body):
                host.runSync(run, body: body)
            case .async(let body):
                host.start(run, cancellingPrevious: false) { emitter in
                    try await body { event in emitter.emit(event) ? .accepted : .stopped }
                }
            }
        }
    }
}
