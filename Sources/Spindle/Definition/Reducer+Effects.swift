extension Reducer where State: Sendable, Event: Sendable {
    /// Creates a reducer with effects as data: `reduce` returns the next
    /// state and a list of effect values (a ``Next``), and each running loop
    /// hands those effects, in order, to its own runtime of `router`.
    ///
    /// Use it as a spin's reducer, alongside ordinary feedbacks:
    ///
    /// @Snippet(path: "Spindle/Snippets/Spindle/EffectsAsData", slice: "run")
    ///
    /// ``reduce`` of this reducer computes the state only (it drops the
    /// effects). To test the effects, call your `Next` function directly, or
    /// run the spin with SpindleTesting's `TestSpin`, which routes and runs
    /// them deterministically.
    ///
    /// > Important: The effects of one reduction are dispatched in the order
    /// > listed, and effects across reductions in reduction order; see
    /// > ``EffectRouter`` for what each route promises, and for stop.
    ///
    /// - Parameters:
    ///   - reduce: computes the next step; must be pure. Runs on the loop's
    ///     reducer thread.
    ///   - router: where the effects go.
    @inlinable
    public init<Effect: Sendable>(
        _ reduce: @escaping @Sendable (State, Event) -> Next<State, Effect>,
        effects router: EffectRouter<Effect, Event>
    ) {
        // Built here, where the concrete types are known (see reduceInPlace).
        self.init(
            next: reduce,
            nextInPlace: { state, payload in
                let next = reduce(state, payload.assumingMemoryBound(to: Event.self).move())
                if let newState = next.state { state = newState }
                return next.effects
            },
            router: router)
    }

    @usableFromInline
    init<Effect: Sendable>(
        next: @escaping @Sendable (State, Event) -> Next<State, Effect>,
        nextInPlace: @escaping @Sendable (inout State, UnsafeMutableRawPointer) -> [Effect],
        router: EffectRouter<Effect, Event>
    ) {
        self.reduce = { state, event in next(state, event).state ?? state }
        // A loop never uses this one: it reduces with its own, below, which
        // also dispatches the effects.
        self.reduceInPlace = { state, payload in _ = nextInPlace(&state, payload) }
        self.reduceRunInPlace = nil
        self.loopEffects = LoopEffectsFactory(
            make: { defaultQueue in
                let dispatcher = EffectDispatcher(router: router, defaultQueue: defaultQueue)
                return LoopEffects(
                    reduceInPlace: { state, payload in
                        let effects = nextInPlace(&state, payload)
                        if !effects.isEmpty { dispatcher.dispatch(effects) }
                    },
                    connect: dispatcher.connect,
                    stop: dispatcher.stop(whenDone:))
            },
            next: { state, event in
                let step = next(state, event)
                return (step.state, step.effects)
            })
    }

    /// A loop's plain reducer: `reduceInPlace` already dispatches its effects.
    init(reduce: @escaping @Sendable (State, Event) -> State,
         reduceInPlace: @escaping @Sendable (inout State, UnsafeMutableRawPointer) -> Void) {
        self.reduce = reduce
        self.reduceInPlace = reduceInPlace
        self.reduceRunInPlace = nil
        self.loopEffects = nil
    }
}
