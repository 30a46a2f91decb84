import Dispatch

extension Feedback {
    /// Creates a feedback that propagates a gear event for each state that
    /// `propagating` maps to one.
    public init<GearEvent: Sendable>(
        attachedTo gear: Gear<GearEvent>,
        propagating: @escaping @Sendable (State) -> GearEvent?,
        on queue: DispatchQueue? = nil
    ) {
        self.init(
            effect: { state in
                if let gearEvent = propagating(state) { gear.propagate(gearEvent) }
                return nil
            },
            on: queue,
            applying: .continueOnNewState
        )
    }

    /// Creates a feedback that turns the gear's events into this loop's
    /// events while the loop runs (attached at start, detached at stop).
    public init<GearEvent: Sendable>(
        attachedTo gear: Gear<GearEvent>,
        propagating: @escaping @Sendable (GearEvent) -> Event?
    ) {
        self.init(
            effect: .attached({ emitter in
                gear.subscribe { gearEvent in
                    if let event = propagating(gearEvent) { _ = emitter.emit(event) }
                }
            }),
            queue: nil,
            strategy: .continueOnNewState
        )
    }

    /// Short syntax: propagates `gearEvent` whenever the state equals `state`.
    public init<GearEvent: Sendable>(
        attachedTo gear: Gear<GearEvent>,
        catching state: State,
        propagating gearEvent: GearEvent,
        on queue: DispatchQueue? = nil
    ) where State: Equatable {
        self.init(attachedTo: gear, propagating: { $0 == state ? gearEvent : nil }, on: queue)
    }

    /// Short syntax: emits `event` whenever the gear propagates `gearEvent`.
    public init<GearEvent: Sendable & Equatable>(
        attachedTo gear: Gear<GearEvent>,
        catching gearEvent: GearEvent,
        emitting event: Event
    ) {
        self.init(attachedTo: gear, propagating: { $0 == gearEvent ? event : nil })
    }
}
