import Spindle

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

    // protected by lock: everything the loop reported.
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
