import Dispatch

extension Feedback {
    /// Creates a feedback that turns the gear's events into this loop's
    /// events while the loop runs (attached at start, detached at stop).
    /// - Parameters:
    ///   - gear: the gear to listen to.
    ///   - transform: maps a gear event to a loop event, or nil to ignore it.
    ///   - queue: where `transform` runs (a serial queue keeps each
    ///     propagating thread's order); nil: on the thread that calls
    ///     ``Gear/propagate(_:)``.
    public init<GearEvent: Sendable>(
        attachedTo gear: Gear<GearEvent>,
        fromGear transform: @escaping @Sendable (GearEvent) -> Event?,
        on queue: DispatchQueue? = nil
    ) {
        self.init(
            effect: .attached({ emitter in
                gear.subscribe { gearEvent in
                    guard let queue else {
                        if let event = transform(gearEvent) { _ = emitter.emit(event) }
                        return
                    }
                    queue.async {
                        if let event = transform(gearEvent) { _ = emitter.emit(event) }
                    }
                }
            }),
            queue: nil,
            strategy: .continueOnNewState
        )
    }

    /// Creates a feedback that propagates a gear event for each state that
    /// `transform` maps to one.
    /// - Parameters:
    ///   - gear: the gear to propagate to.
    ///   - transform: maps a state to a gear event, or nil.
    ///   - queue: where `transform` and the propagation run; nil: the
    ///     loop's executor.
    public init<GearEvent: Sendable>(
        attachedTo gear: Gear<GearEvent>,
        toGear transform: @escaping @Sendable (State) -> GearEvent?,
        on queue: DispatchQueue? = nil
    ) {
        self.init(
            effect: { state in
                if let gearEvent = transform(state) { gear.propagate(gearEvent) }
                return nil
            },
            on: queue,
            applying: .continueOnNewState
        )
    }

    /// Spin.Swift's spelling of ``init(attachedTo:toGear:on:)``: one label,
    /// `propagating:`, for both directions, which Swift cannot tell apart
    /// when the state, the loop's events and the gear's are one type.
    @available(*, deprecated, renamed: "init(attachedTo:toGear:on:)", message: "say the direction: toGear: (state → gear)")
    public init<GearEvent: Sendable>(
        attachedTo gear: Gear<GearEvent>,
        propagating transform: @escaping @Sendable (State) -> GearEvent?,
        on queue: DispatchQueue? = nil
    ) {
        self.init(attachedTo: gear, toGear: transform, on: queue)
    }

    /// Spin.Swift's spelling of ``init(attachedTo:fromGear:on:)``: one label,
    /// `propagating:`, for both directions, which Swift cannot tell apart
    /// when the state, the loop's events and the gear's are one type.
    @available(*, deprecated, renamed: "init(attachedTo:fromGear:on:)", message: "say the direction: fromGear: (gear → loop)")
    public init<GearEvent: Sendable>(
        attachedTo gear: Gear<GearEvent>,
        propagating transform: @escaping @Sendable (GearEvent) -> Event?,
        on queue: DispatchQueue? = nil
    ) {
        self.init(attachedTo: gear, fromGear: transform, on: queue)
    }

    /// Short syntax: propagates `gearEvent` whenever the state equals `state`.
    public init<GearEvent: Sendable>(
        attachedTo gear: Gear<GearEvent>,
        catching state: State,
        propagating gearEvent: GearEvent,
        on queue: DispatchQueue? = nil
    ) where State: Equatable {
        self.init(attachedTo: gear, toGear: { $0 == state ? gearEvent : nil }, on: queue)
    }

    /// Short syntax: emits `event` whenever the gear propagates `gearEvent`.
    public init<GearEvent: Sendable & Equatable>(
        attachedTo gear: Gear<GearEvent>,
        catching gearEvent: GearEvent,
        emitting event: Event,
        on queue: DispatchQueue? = nil
    ) {
        self.init(attachedTo: gear, fromGear: { $0 == gearEvent ? event : nil }, on: queue)
    }
}
