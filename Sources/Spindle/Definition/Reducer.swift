/// The pure function that computes a spin's next state from its current
/// state and an event.
///
/// A reducer must not have side effects: those belong in a ``Feedback``.
/// Spindle runs a loop's reducer on the loop's own reducer thread, never
/// concurrently with itself.
public struct Reducer<State, Event>: Sendable {
    /// The reduce function.
    public let reduce: @Sendable (State, Event) -> State

    /// The engine's form of `reduce`: updates the state in place and moves
    /// the event out of the queue's memory at `payload` (leaving it
    /// uninitialized).
    ///
    /// Why: the engine is generic and unspecialized, so there every copy of
    /// a `State` or an `Event` is a value-witness call (two state copies and
    /// an event copy per event were the reducer thread's largest cost). This
    /// closure is built by the inlinable initializer in the module that
    /// names the concrete types, where those copies are a few moves.
    @usableFromInline let reduceInPlace: @Sendable (inout State, UnsafeMutableRawPointer) -> Void

    /// `reduceInPlace` for a run of adjacent payloads (`count` of them,
    /// `MemoryLayout<Event>.stride` apart: a lane's block), each moved out
    /// and reduced in order. Built by the same inlinable initializer, so the
    /// loop is specialized and `reduce` inlined into it: one call per run
    /// instead of one per event. nil for a reducer with effects (a loop
    /// then reduces event by event).
    @usableFromInline let reduceRunInPlace: (@Sendable (inout State, UnsafeMutableRawPointer, Int) -> Void)?

    /// A reducer with effects (see `Reducer+Effects.swift`) builds each
    /// loop's own effect runtime with this; nil for a plain reducer, whose
    /// loops pay nothing for effects.
    @usableFromInline let loopEffects: LoopEffectsFactory<State, Event>?

    /// Creates a reducer.
    /// - Parameter reduce: computes the next state; must be pure.
    @inlinable
    public init(_ reduce: @escaping @Sendable (State, Event) -> State) {
        self.reduce = reduce
        self.reduceInPlace = { state, payload in
            state = reduce(state, payload.assumingMemoryBound(to: Event.self).move())
        }
        self.reduceRunInPlace = { state, first, count in
            let events = first.assumingMemoryBound(to: Event.self)
            var current = state
            for index in 0..<count {
                current = reduce(current, (events + index).move())
            }
            state = current
        }
        self.loopEffects = nil
    }
}
