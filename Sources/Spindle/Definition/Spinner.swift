import Dispatch

/// The declarative builder syntax of Spin.Swift:
///
/// @Snippet(path: "Spindle/Snippets/Spindle/GettingStarted", slice: "spinner")
public enum Spinner {
    /// Starts a spin definition from its initial state.
    /// - Parameters:
    ///   - state: the first state.
    ///   - queue: the default queue for feedbacks that name none.
    public static func initialState<State: Sendable>(
        _ state: State,
        executeOn queue: DispatchQueue? = nil
    ) -> SpinnerState<State> {
        SpinnerState(initialState: state, queue: queue)
    }
}

/// A spin definition with its initial state; add feedbacks, then a reducer.
public struct SpinnerState<State: Sendable>: Sendable {
    let initialState: State
    let queue: DispatchQueue?

    /// Adds the first feedback.
    public func feedback<Event: Sendable>(_ feedback: Feedback<State, Event>) -> SpinnerFeedback<State, Event> {
        SpinnerFeedback(initialState: initialState, queue: queue, feedbacks: [feedback])
    }

    /// Finishes a spin that has no feedback.
    public func reducer<Event: Sendable>(_ reducer: Reducer<State, Event>) -> Spin<State, Event> {
        Spin(initialState: initialState, feedbacks: [], reducer: reducer, executeOn: queue)
    }
}

/// A spin definition with feedbacks; add more, then a reducer.
public struct SpinnerFeedback<State: Sendable, Event: Sendable>: Sendable {
    let initialState: State
    let queue: DispatchQueue?
    let feedbacks: [Feedback<State, Event>]

    /// Adds a feedback.
    public func feedback(_ feedback: Feedback<State, Event>) -> SpinnerFeedback {
        SpinnerFeedback(initialState: initialState, queue: queue, feedbacks: feedbacks + [feedback])
    }

    /// Finishes the spin with its reducer.
    public func reducer(_ reducer: Reducer<State, Event>) -> Spin<State, Event> {
        Spin(initialState: initialState, feedbacks: feedbacks, reducer: reducer, executeOn: queue)
    }
}
