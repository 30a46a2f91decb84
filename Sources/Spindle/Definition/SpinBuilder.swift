/// The result builder behind `Spin(initialState:) { … }`: exactly one
/// reducer, and any number of feedbacks before or after it (with `if`,
/// `if/else` and `for` allowed). A block without a reducer, or with two,
/// does not compile.
///
/// Swift types a builder's statements one at a time, top to bottom, so the
/// loop's `Event` type is fixed by the first statement that names it. A
/// feedback whose closure never mentions `Event` (a renderer, a gear
/// feedback) cannot name it: as the first statement, it either leaves
/// `Event` unknown ("generic parameter 'Event' could not be inferred") or,
/// when its closure returns nothing, makes it `Void`, and the reducer below
/// then does not fit. Put the reducer first (Spin.Swift's order, reducer
/// last, works whenever the first feedback mentions `Event`), or name the
/// types: `Spin<State, Event>(initialState:) { … }`. In the `Void` case the
/// block fails with a message that says so, not with a type mismatch.
@resultBuilder
public enum SpinBuilder<State: Sendable, Event: Sendable> {
    public static func buildExpression(_ feedback: Feedback<State, Event>) -> [Feedback<State, Event>] {
        [feedback]
    }

    public static func buildExpression(_ reducer: Reducer<State, Event>) -> Reducer<State, Event> {
        reducer
    }

    /// The inference trap, reported: the statements above the reducer fixed
    /// another `Event` (`Void`, from a renderer's closure) than the
    /// reducer's. Never chosen when the types agree.
    @available(
        *, unavailable,
        message: "the feedbacks above the reducer fixed another Event type than the reducer's (a feedback closure that never mentions Event, such as a renderer, makes it Void): put the reducer first in the block, or write Spin<State, Event>(initialState:) { … }"
    )
    public static func buildExpression<ReducerEvent>(_ reducer: Reducer<State, ReducerEvent>) -> Reducer<State, Event> {
        fatalError("unavailable")
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

    /// Feedbacks after the reducer (the reducer-first order, which fixes
    /// `Event` before any feedback is typed).
    public static func buildPartialBlock(
        accumulated: SpinContent<State, Event>, next: [Feedback<State, Event>]
    ) -> SpinContent<State, Event> {
        SpinContent(feedbacks: accumulated.feedbacks + next, reducer: accumulated.reducer)
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
