import Dispatch

// A feedback run in a loop of other types: SpindleTesting's `TestFeedback`
// runs one feedback on the real engine, in a loop whose states it chooses
// and whose events it collects instead of reducing.

extension Feedback {
    /// This feedback, for a loop of `LoopState`s and `LoopEvent`s: it runs
    /// for the states `state` maps to a value (a state it maps to nil is
    /// filtered out: it starts nothing and cancels nothing), and its events
    /// are emitted through `event`. The effect, its filter, strategy, queue
    /// and delivery are kept; a merged feedback's parts are adapted.
    /// A per-start feedback becomes one that does nothing: it needs a
    /// start's environment (resolve it first).
    package func adapted<LoopState: Sendable, LoopEvent: Sendable>(
        state: @escaping @Sendable (LoopState) -> State?,
        event: @escaping @Sendable (Event) -> LoopEvent
    ) -> Feedback<LoopState, LoopEvent> {
        typealias Adapted = Feedback<LoopState, LoopEvent>
        let own = filter
        let passes: @Sendable (LoopState) -> Bool = { loopState in
            guard let mapped = state(loopState) else { return false }
            return own?(mapped) ?? true
        }
        // Called only for states that pass the filter, which maps them.
        let unwrap: @Sendable (LoopState) -> State = { state($0)! }
        let emitter: @Sendable (EffectEmitter<LoopEvent>) -> EffectEmitter<Event> = { outer in
            EffectEmitter(emit: { outer.emit(event($0)) }, send: { await outer.send(event($0)) })
        }
        let effect: Adapted.Effect
        switch self.effect {
        case .sync(let body):
            effect = .sync { body(unwrap($0)).map(event) }
        case .async(let body):
            effect = .async { try await body(unwrap($0)).map(event) }
        case .sequence(let body):
            effect = .sequence { try await body(unwrap($0), emitter($1)) }
        case .attached(let subscribe):
            effect = .attached { subscribe(emitter($0)) }
        case .stream(let body):
            effect = .stream { states, outer in
                try await body(AsyncStream(mapping: states, unwrap), emitter(outer))
            }
        case .pipe(let open):
            effect = .pipe { outer in
                let pipe = open(emitter(outer))
                return StatePipe(send: { pipe.send(unwrap($0)) }, close: pipe.close)
            }
        case .source(let body):
            effect = .source { try await body(emitter($0)) }
        case .merged(let parts):
            effect = .merged(parts.map { $0.adapted(state: state, event: event) })
        case .perStart:
            effect = .merged([])
        }
        var adapted = Adapted(effect: effect, filter: passes, queue: queue, strategy: strategy)
        adapted.runsOnReducerThread = runsOnReducerThread
        adapted.delivery = delivery
        adapted.streamBufferLimit = streamBufferLimit
        return adapted
    }
}

extension AsyncStream {
    /// `base`'s elements mapped by `transform`, read by one task.
    fileprivate init<Base: Sendable>(mapping base: AsyncStream<Base>, _ transform: @escaping @Sendable (Base) -> Element) {
        let iterator = StreamReader(base)
        self.init(unfolding: { await iterator.next().map(transform) })
    }
}

/// A stream's iterator, for a stream made over it with
/// `AsyncStream(unfolding:)` and read by one task, one `next()` at a time
/// (a stream feedback's run). `@unchecked Sendable` because the unfolding
/// closure that holds it must be `Sendable`, though only that task calls it.
final class StreamReader<Element: Sendable>: @unchecked Sendable {
    private var base: AsyncStream<Element>.Iterator

    init(_ stream: AsyncStream<Element>) {
        base = stream.makeAsyncIterator()
    }

    func next() async -> Element? {
        await base.next()
    }
}
