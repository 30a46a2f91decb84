/// The result builder behind Spin.Swift's declarative form,
/// `Spin(initialState:reducer:) { … }`: feedbacks only (with `if`,
/// `if/else` and `for` allowed), the reducer being given as an argument.
@resultBuilder
public enum FeedbackBuilder<State: Sendable, Event: Sendable> {
    public static func buildExpression(_ feedback: Feedback<State, Event>) -> [Feedback<State, Event>] {
        [feedback]
    }

    public static func buildBlock(_ groups: [Feedback<State, Event>]...) -> [Feedback<State, Event>] {
        groups.flatMap { $0 }
    }

    public static func buildOptional(_ feedbacks: [Feedback<State, Event>]?) -> [Feedback<State, Event>] {
        feedbacks ?? []
    }

    public static func buildEither(first: [Feedback<State, Event>]) -> [Feedback<State, Event>] { first }

    public static func buildEither(second: [Feedback<State, Event>]) -> [Feedback<State, Event>] { second }

    public static func buildArray(_ groups: [[Feedback<State, Event>]]) -> [Feedback<State, Event>] {
        groups.flatMap { $0 }
    }
}
