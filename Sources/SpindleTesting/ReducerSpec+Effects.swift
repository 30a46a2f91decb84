import Spindle

// The effect checks of a `ReducerSpec` over a reducer with effects as data,
// after MobiusTest's `hasEffects` / `hasNoEffects`: the reducer's `Next`
// values are recorded, never routed to a handler.

extension ReducerSpec.Outcome {
    /// Every effect the events dispatched, in order: the effects of the
    /// first event as the reducer listed them, then those of the second,
    /// and so on. Empty for a plain reducer.
    ///
    /// - Parameter type: the reducer's effect type.
    /// - Returns: the effects, in order.
    /// - Precondition: `type` is the reducer's effect type.
    public func effects<Effect>(as type: Effect.Type = Effect.self) -> [Effect] {
        (effectsByEvent ?? []).joined().map { effect in
            guard let typed = effect as? Effect else {
                preconditionFailure("ReducerSpec: the reducer's effects are \(Swift.type(of: effect)), not \(Effect.self)")
            }
            return typed
        }
    }

    /// Checks that the events dispatched exactly `expected`, in order
    /// (every event's effects, one event after another).
    ///
    /// @Snippet(path: "Spindle/Snippets/SpindleTesting/TestingReducerSpecs", slice: "effects")
    ///
    /// - Parameters:
    ///   - expected: the effects, in dispatch order.
    ///   - fileID: the file to report a failure at (`#fileID` of the caller).
    ///   - line: the line to report a failure at (`#line` of the caller).
    /// - Throws: ``SpecFailure`` showing the expected and actual effects and
    ///   their difference; or naming the reducer as one without effects.
    public func thenEffects<Effect: Equatable>(
        equal expected: [Effect],
        fileID: String = #fileID,
        line: Int = #line
    ) throws {
        let actual = try typedEffects(Effect.self, fileID: fileID, line: line)
        guard actual != expected else { return }
        throw failure(
            "the effects are not the expected ones",
            extra: "expected effects:\n  \(Rendering.list(expected))\n"
                + "actual effects:\n  \(Rendering.list(actual))\n"
                + Rendering.difference(expected: expected, actual: actual),
            fileID: fileID,
            line: line
        )
    }

    /// Checks that each of `expected` is among the effects the events
    /// dispatched, in any order, others allowed (Mobius's `hasEffects`).
    /// An effect expected twice must have been dispatched twice.
    ///
    /// - Parameters:
    ///   - expected: effects that must have been dispatched.
    ///   - fileID: the file to report a failure at (`#fileID` of the caller).
    ///   - line: the line to report a failure at (`#line` of the caller).
    /// - Throws: ``SpecFailure`` naming the missing effects.
    /// - Complexity: O(expected × actual) comparisons.
    public func thenEffects<Effect: Equatable>(
        contain expected: [Effect],
        fileID: String = #fileID,
        line: Int = #line
    ) throws {
        var remaining = try typedEffects(Effect.self, fileID: fileID, line: line)
        var missing: [Effect] = []
        for effect in expected {
            if let index = remaining.firstIndex(of: effect) {
                remaining.remove(at: index)
            } else {
                missing.append(effect)
            }
        }
        guard !missing.isEmpty else { return }
        throw failure(
            "the effects do not contain every expected one",
            extra: "missing effects:\n  \(Rendering.list(missing))\n"
                + "actual effects:\n  \(Rendering.list(try typedEffects(Effect.self, fileID: fileID, line: line)))\n",
            fileID: fileID,
            line: line
        )
    }

    /// Checks that the events dispatched no effect (Mobius's
    /// `hasNoEffects`). A plain reducer passes.
    /// - Throws: ``SpecFailure`` listing the effects dispatched.
    public func thenNoEffects(fileID: String = #fileID, line: Int = #line) throws {
        let actual = Array((effectsByEvent ?? []).joined())
        guard !actual.isEmpty else { return }
        throw failure(
            "expected no effects, but the events dispatched \(actual.count)",
            extra: "actual effects:\n  \(Rendering.list(actual))\n",
            fileID: fileID,
            line: line
        )
    }

    /// The effects as `Effect`s, or the failure that says why they are not.
    private func typedEffects<Effect>(_ type: Effect.Type, fileID: String, line: Int) throws -> [Effect] {
        guard let effectsByEvent else {
            throw failure(
                "expected effects, but the reducer has none (make it with Reducer(_:effects:) or ReducerSpec(next:))",
                fileID: fileID,
                line: line
            )
        }
        let all = Array(effectsByEvent.joined())
        let typed = all.compactMap { $0 as? Effect }
        guard typed.count == all.count else {
            let other = all.first { !($0 is Effect) }.map { "\(Swift.type(of: $0))" } ?? "?"
            throw failure("the reducer's effects are \(other), not \(Effect.self)", fileID: fileID, line: line)
        }
        return typed
    }
}

extension ReducerSpec.Outcome where State: Equatable {
    /// Checks the final state and every effect the events dispatched, in
    /// order: ``thenState(equals:fileID:line:)`` then
    /// ``thenEffects(equal:fileID:line:)``.
    ///
    /// - Parameters:
    ///   - state: the expected final state.
    ///   - effects: the expected effects, in dispatch order.
    ///   - fileID: the file to report a failure at (`#fileID` of the caller).
    ///   - line: the line to report a failure at (`#line` of the caller).
    /// - Throws: ``SpecFailure`` for the first of the two that differs.
    public func then<Effect: Equatable>(
        state: State,
        effects: [Effect],
        fileID: String = #fileID,
        line: Int = #line
    ) throws {
        try thenState(equals: state, fileID: fileID, line: line)
        try thenEffects(equal: effects, fileID: fileID, line: line)
    }
}
