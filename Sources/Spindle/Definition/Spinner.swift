import Dispatch

/// The declarative builder syntax of Spin.Swift:
///
/// @Snippet(path: "Spindle/Snippets/Spindle/GettingStarted", slice: "spinner")
public enum Spinner {
    /// Starts a spin definition from its initial state. Where the loop
    /// runs is chosen when it starts: ``SpinOptions/executor``.
    /// - Parameter state: the first state.
    public static func initialState<State: Sendable>(_ state: State) -> SpinnerState<State> {
        SpinnerState(initialState: state)
    }

    /// Spin.Swift's `executeOn:`. Spindle chooses where a loop runs in one
    /// place, when it starts: ``SpinOptions/executor``.
    @available(*, unavailable, message: "choose where the loop runs when it starts: spin.start(options: SpinOptions(executor: .queue(queue)))")
    public static func initialState<State: Sendable>(_ state: State, executeOn queue: DispatchQueue) -> SpinnerState<State> {
        fatalError("unavailable")
    }
}

/// A spin definition with its initial state; add feedbacks, then a reducer.
public struct SpinnerState<State: Sendable>: Sendable {
    let initialState: State

    /// Adds the first feedback.
    public func feedback<Event: Sendable>(_ feedback: Feedback<State, Event>) -> SpinnerFeedback<State, Event> {
        SpinnerFeedback(initialState: initialState, feedbacks: [feedback])
    }

    /// Finishes a spin that has no feedback.
    public func reducer<Event: Sendable>(_ reducer: Reducer<State, Event>) -> Spin<State, Event> {
        Spin(initialState: initialState, feedbacks: [], reducer: reducer)
    }
}

/// A spin definition with feedbacks; add more, then a reducer.
public struct SpinnerFeedback<State: Sendable, Event: Sendable>: Sendable {
    let initialState: State
    let feedbacks: [Feedback<State, Event>]

    /// Adds a feedback.
    public func feedback(_ feedback: Feedback<State, Event>) -> SpinnerFeedback {
        SpinnerFeedback(initialState: initialState, feedbacks: feedbacks + [feedback])
    }

    /// Finishes the spin with its reducer.
    public func reducer(_ reducer: Reducer<State, Event>) -> Spin<State, Event> {
        Spin(initialState: initialState, feedbacks: feedbacks, reducer: reducer)
    }
}
