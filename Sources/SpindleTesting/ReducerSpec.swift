import Spindle

/// A given/when/then spec for a reducer, after Mobius's `UpdateSpec`.
///
/// @Snippet(path: "Spindle/Snippets/SpindleTesting/TestingReducerSpecs", slice: "spec")
///
/// The spec calls the reducer's public `Reducer.reduce` function directly:
/// no loop, no thread, synchronous. The events are reduced in order, each
/// from the state the previous one produced. A `then…` call that fails
/// throws a ``SpecFailure`` naming the given state, the events, and the
/// expected and actual states (with a line diff where both can be compared).
///
/// For a reducer with effects as data (`Reducer(_:effects:)`, or a function
/// returning a `Next`), the spec calls that function instead and
/// records the effects each event dispatched too, without routing them to
/// any handler, and checks them as Mobius's `hasEffects` does:
///
/// @Snippet(path: "Spindle/Snippets/SpindleTesting/TestingReducerSpecs", slice: "effects")
///
/// **Thread safety:** a value type; `Sendable`. The reducer runs on the
/// calling thread.
public struct ReducerSpec<State, Event>: Sendable {
    /// The reducer under test.
    public let reducer: Reducer<State, Event>

    /// Creates a spec for `reducer`.
    public init(_ reducer: Reducer<State, Event>) {
        self.reducer = reducer
    }

    /// Creates a spec for a reduce function.
    public init(_ reduce: @escaping @Sendable (State, Event) -> State) {
        self.reducer = Reducer(reduce)
    }

    /// Creates a spec for a reduce function with effects as data: the
    /// outcome records the effects of each `Next` it returns (see
    /// ``Outcome/thenEffects(equal:fileID:line:)``).
    /// - Parameter next: computes the next state and the effects; must be
    ///   pure.
    public init<Effect: Sendable>(next: @escaping @Sendable (State, Event) -> Next<State, Effect>)
    where State: Sendable, Event: Sendable {
        self.reducer = Reducer(next, effects: EffectRouter<Effect, Event>())
    }

    /// The state the events are reduced from.
    public func given(_ state: State) -> Given {
        Given(reducer: reducer, state: state)
    }

    /// A spec with its starting state.
    public struct Given {
        let reducer: Reducer<State, Event>
        /// The starting state.
        public let state: State

        /// Reduces `events`, in order, from the given state.
        public func when(_ events: Event...) -> Outcome {
            when(events)
        }

        /// Reduces `events`, in order, from the given state. An empty list
        /// leaves the state as given. For a reducer with effects, records
        /// the effects of each event (no handler runs).
        public func when(_ events: [Event]) -> Outcome {
            var states: [State] = []
            states.reserveCapacity(events.count)
            let next = reducer.nextWithEffects
            var effects: [[any Sendable]]? = next == nil ? nil : []
            var current = state
            for event in events {
                if let next {
                    let step = next(current, event)
                    current = step.state ?? current
                    effects?.append(step.effects)
                } else {
                    current = reducer.reduce(current, event)
                }
                states.append(current)
            }
            return Outcome(given: state, events: events, states: states, effectsByEvent: effects)
        }
    }

    /// What the reducer made of the events; the `then…` methods check it.
    public struct Outcome {
        /// The starting state.
        public let given: State
        /// The events, in the order they were reduced.
        public let events: [Event]
        /// The state after each event: `states[i]` follows `events[i]`.
        public let states: [State]
        /// For a reducer with effects, the effects of each event:
        /// `effectsByEvent[i]` are those `events[i]` dispatched, in order;
        /// nil for a plain reducer.
        let effectsByEvent: [[any Sendable]]?

        /// The state after the last event (the given state if there were none).
        public var finalState: State { states.last ?? given }

        /// Runs `assertion` on the final state. An error it throws becomes a
        /// ``SpecFailure`` that shows the given state, the events, the final
        /// state and that error.
        ///
        /// - Parameters:
        ///   - assertion: throws when the final state is wrong.
        ///   - fileID: the file to report a failure at (`#fileID` of the caller).
        ///   - line: the line to report a failure at (`#line` of the caller).
        /// - Throws: ``SpecFailure``.
        public func then(
            _ assertion: (State) throws -> Void,
            fileID: String = #fileID,
            line: Int = #line
        ) throws {
            do {
                try assertion(finalState)
            } catch {
                throw failure("the assertion threw: \(error)", fileID: fileID, line: line)
            }
        }

        /// Checks that `predicate` holds for the final state.
        ///
        /// @Snippet(path: "Spindle/Snippets/SpindleTesting/TestingReducerSpecs", slice: "thens")
        ///
        /// - Parameters:
        ///   - expectation: what the predicate checks, for the failure message.
        ///   - predicate: true when the final state is right.
        ///   - fileID: the file to report a failure at (`#fileID` of the caller).
        ///   - line: the line to report a failure at (`#line` of the caller).
        /// - Throws: ``SpecFailure`` when the predicate is false.
        public func then(
            _ expectation: String,
            _ predicate: (State) throws -> Bool,
            fileID: String = #fileID,
            line: Int = #line
        ) throws {
            let holds: Bool
            do {
                holds = try predicate(finalState)
            } catch {
                throw failure("expected \(expectation), but the check threw: \(error)", fileID: fileID, line: line)
            }
            if !holds {
                throw failure("expected \(expectation)", fileID: fileID, line: line)
            }
        }

        func failure(_ what: String, extra: String = "", fileID: String, line: Int) -> SpecFailure {
            var text = "ReducerSpec failed: \(what)\n"
            text += Rendering.labeled("given", given)
            text += "when:\n"
            if events.isEmpty { text += "  (no events)\n" }
            for (index, event) in events.enumerated() {
                text += "  \(index + 1). \(event)"
                if let effects = effectsByEvent?[index] {
                    text += effects.isEmpty ? " → no effects" : " → effects: \(Rendering.list(effects))"
                }
                text += "\n"
            }
            text += extra
            text += "final state:\n\(Rendering.block(finalState))"
            return SpecFailure(message: text, fileID: fileID, line: line)
        }
    }
}

extension ReducerSpec.Outcome where State: Equatable {
    /// Checks that the final state equals `expected`.
    /// - Throws: ``SpecFailure`` showing the expected and actual states and
    ///   the lines that differ.
    public func thenState(equals expected: State, fileID: String = #fileID, line: Int = #line) throws {
        let actual = finalState
        guard actual != expected else { return }
        throw failure(
            "the final state is not the expected one",
            extra: Rendering.labeled("expected state", expected) + Rendering.difference(expected: expected, actual: actual),
            fileID: fileID,
            line: line
        )
    }

    /// Checks every intermediate state: `expected[i]` must equal the state
    /// after the `i`-th event (so there is one expected state per event).
    /// - Throws: ``SpecFailure`` naming the first event whose state differs.
    public func thenStates(equal expected: [State], fileID: String = #fileID, line: Int = #line) throws {
        guard expected.count == states.count else {
            throw failure(
                "expected \(expected.count) states, but \(states.count) events were reduced",
                fileID: fileID,
                line: line
            )
        }
        for index in states.indices where states[index] != expected[index] {
            throw failure(
                "the state after event \(index + 1) (\(events[index])) is not the expected one",
                extra: Rendering.labeled("expected after event \(index + 1)", expected[index])
                    + Rendering.labeled("actual after event \(index + 1)", states[index])
                    + Rendering.difference(expected: expected[index], actual: states[index]),
                fileID: fileID,
                line: line
            )
        }
    }
}

extension ReducerSpec.Given: Sendable where State: Sendable {}
// Its effects are `any Sendable`.
extension ReducerSpec.Outcome: Sendable where State: Sendable, Event: Sendable {}
