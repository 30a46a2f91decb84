/// `==` for `Value` when it is `Equatable` (nil otherwise), found once:
/// an atom node's stop at an equal value, a UI bridge's skip of a state
/// equal to the one it holds (Spin.Swift's `SwiftUISpin`).
package func equality<Value>(for type: Value.Type) -> (@Sendable (Value, Value) -> Bool)? {
    guard let equatable = type as? any Equatable.Type else { return nil }
    return makeEquality(equatable, as: type)
}

private func makeEquality<E: Equatable, Value>(_: E.Type, as _: Value.Type) -> @Sendable (Value, Value) -> Bool {
    // Value and E are the same type (the cast above succeeded): view each
    // value as E without a dynamic cast per comparison.
    { lhs, rhs in
        withUnsafePointer(to: lhs) { left in
            withUnsafePointer(to: rhs) { right in
                left.withMemoryRebound(to: E.self, capacity: 1) { l in
                    right.withMemoryRebound(to: E.self, capacity: 1) { r in l.pointee == r.pointee }
                }
            }
        }
    }
}

/// Which renders a UI bridge that holds its state (``ObservationSpin``,
/// SpindleCombine's `ObservableSpin`) sets as its new state: not the first
/// (the initial state, which it holds already, so observers see no change
/// at start), and, for an `Equatable` state, none equal to the state it
/// holds (Spin.Swift's `SwiftUISpin` skips those too).
package struct HeldStateFilter<State>: Sendable {
    private var initialRendered = false
    private let isEqual: (@Sendable (State, State) -> Bool)?

    package init() {
        isEqual = equality(for: State.self)
    }

    /// Whether `rendered` should replace `held`; counts the first render.
    package mutating func admits(_ rendered: State, replacing held: State) -> Bool {
        guard initialRendered else {
            initialRendered = true
            return false
        }
        return !(isEqual?(held, rendered) ?? false)
    }
}
