extension Reducer {
    /// For a reducer with effects (`Reducer(_:effects:)`): reduces one
    /// event without a loop, answering the next state (nil: unchanged) and
    /// the effects, in the order the reducer listed them, none routed or
    /// handled; nil for a plain reducer. For SpindleTesting's `ReducerSpec`,
    /// which checks a reducer's effects as values.
    package var nextWithEffects: (@Sendable (State, Event) -> (state: State?, effects: [any Sendable]))? {
        loopEffects?.next
    }
}
