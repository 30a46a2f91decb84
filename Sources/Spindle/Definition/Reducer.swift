/// The pure function that computes a spin's next state from its current
/// state and an event.
///
/// A reducer must not have side effects: those belong in a ``Feedback``.
/// Spindle runs a loop's reducer on the loop's own reducer thread, never
/// concurrently with itself.
public struct Reducer<State, Event>: Sendable {
    /// The reduce function.
    public let reduce: @Sendable (State, Event) -> State

    /// Creates a reducer.
    /// - Parameter reduce: computes the next state; must be pure.
    public init(_ reduce: @escaping @Sendable (State, Event) -> State) {
        self.reduce = reduce
    }
}
