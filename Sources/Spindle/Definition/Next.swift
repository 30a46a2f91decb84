/// What a reducer with effects returns for one event: the next state (or
/// none, to keep the current one) and the effects to dispatch, in order.
///
/// The effects are plain values (Mobius's "effects as data"): the reducer
/// stays pure and testable, and a running loop hands each effect to the
/// first route of its ``EffectRouter`` that matches it.
///
/// @Snippet(path: "Spindle/Snippets/Spindle/SpindleSymbolsEffects", slice: "next")
///
/// Thread safety: a value; `Sendable` when its state and effects are.
public struct Next<State, Effect> {
    /// The next state, or nil to keep the current state.
    public let state: State?
    /// The effects to dispatch, in the order the router receives them.
    public let effects: [Effect]

    /// Creates a next step.
    /// - Parameters:
    ///   - state: the next state; nil keeps the current one.
    ///   - effects: the effects to dispatch, in order.
    @inlinable
    public init(state: State?, effects: [Effect] = []) {
        self.state = state
        self.effects = effects
    }

    /// Moves to `state` and dispatches `effects` (none by default).
    @inlinable
    public static func next(_ state: State, effects: [Effect] = []) -> Next {
        Next(state: state, effects: effects)
    }

    /// Keeps the current state and dispatches `effects`.
    @inlinable
    public static func dispatch(_ effects: [Effect]) -> Next {
        Next(state: nil, effects: effects)
    }

    /// Keeps the current state and dispatches nothing.
    @inlinable
    public static var noChange: Next {
        Next(state: nil, effects: [])
    }

    /// Whether this step moves to a new state.
    @inlinable
    public var hasState: Bool { state != nil }
}

extension Next: Sendable where State: Sendable, Effect: Sendable {}
extension Next: Equatable where State: Equatable, Effect: Equatable {}
extension Next: Hashable where State: Hashable, Effect: Hashable {}

extension Next: CustomStringConvertible {
    public var description: String {
        let state = self.state.map { String(describing: $0) } ?? "unchanged"
        return "Next(state: \(state), effects: \(effects))"
    }
}
