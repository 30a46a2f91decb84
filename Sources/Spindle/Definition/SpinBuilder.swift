/// The result builder behind `Spin(initialState:) { … }`: any number of
/// feedbacks (with `if`, `if/else` and `for` allowed), then exactly one
/// reducer, last. A block without a reducer, or with two, does not compile.
@resultBuilder
public enum SpinBuilder<State: Sendable, Event: Sendable> {
    public static func buildExpression(_ feedback: Feedback<State, Event>) -> [Feedback<State, Event>] {
        [feedback]
    }

    public static func buildExpression(_ reducer: Reducer<State, Event>) -> Reducer<State, Event> {
        reducer
    }

    public static func buildPartialBlock(first: [Feedback<State, Event>]) -> [Feedback<State, Event>] {
        first
    }

    public static func buildPartialBlock(first: Reducer<State, Event>) -> SpinContent<State, Event> {
        SpinContent(feedbacks: [], reducer: first)
    }

    public static func buildPartialBlock(
        accumulated: [Feedback<State, Event>], next: [Feedback<State, Event>]
    ) -> [Feedback<State, Event>] {
        accumulated + next
    }

    public static func buildPartialBlock(
        accumulated: [Feedback<State, Event>], next: Reducer<State, Event>
    ) -> SpinContent<State, Event> {
        SpinContent(feedbacks: accumulated, reducer: next)
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

/// What a ``SpinBuilder`` block produces: the feedbacks and the reducer.
public struct SpinContent<State: Sendable, Event: Sendable>: Sendable {
    public let feedbacks: [Feedback<State, Event>]
    public let reducer: Reducer<State, Event>
}
