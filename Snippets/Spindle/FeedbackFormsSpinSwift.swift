// Spin.Swift's other feedback forms: renderers, effects that take no state,
// several feedbacks given as one, a UI feedback, closure lenses, a lens with
// a filter, a Result filter, and the reducer given as an argument.

// snippet.hide
import Foundation
import Spindle

struct Levels: Equatable, Sendable {
    var left: Int
    var right: Int
}

enum LevelsEvent: Sendable {
    case increaseLeft
    case decreaseRight
}

@Sendable func levelsReducer(_ state: Levels, _ event: LevelsEvent) -> Levels {
    var state = state
    switch event {
    case .increaseLeft: state.left += 1
    case .decreaseRight: state.right -= 1
    }
    return state
}

@Sendable func leftEffect(_ state: Levels) -> LevelsEvent? {
    state.left < state.right ? .increaseLeft : nil
}

@Sendable func rightEffect(_ state: Levels) -> LevelsEvent? {
    state.left < state.right ? .decreaseRight : nil
}

/// A loop of `feedbacks` and the levels reducer, from `initial`.
func levelsLoop(
    from initial: Levels = Levels(left: 0, right: 10),
    _ feedbacks: Feedback<Levels, LevelsEvent>...
) throws -> SpinLoop<Levels, LevelsEvent> {
    try Spin(initialState: initial, feedbacks: feedbacks, reducer: Reducer(levelsReducer)).start()
}

/// Runs `feedbacks` from `initial` until the state is `expected`, stops, and
/// checks that nothing more was reduced.
func settles(
    _ name: String, from initial: Levels = Levels(left: 0, right: 10), at expected: Levels,
    _ feedbacks: Feedback<Levels, LevelsEvent>...
) async throws {
    let spin = Spin(initialState: initial, feedbacks: feedbacks, reducer: Reducer(levelsReducer))
    let loop = try spin.start()
    for await state in loop.states() where state == expected { break }
    await loop.stop()
    precondition(loop.state == expected, "\(name): \(loop.state), not \(expected)")
}

/// What a renderer was handed, in order, from any thread.
final class Seen: Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var states: [Levels] = []
    func append(_ state: Levels) { lock.withLock { states.append(state) } }
    var values: [Levels] { lock.withLock { states } }
}

let printed = Seen()
func print(_ levels: Levels) { printed.append(levels) }

// snippet.show
// snippet.renderer
// A renderer: sees every state, emits nothing.
let printer = Feedback<Levels, LevelsEvent>(effect: { levels in print(levels) })
// snippet.end

// An event source that takes no state: subscribed once for the loop's life,
// cancelled by its stop.
let (taps, tap) = AsyncStream<LevelsEvent>.makeStream()
let userInput = Feedback<Levels, LevelsEvent>(effect: { taps })

// A start-up effect that takes no state: called once, when the loop starts.
let kickOff = Feedback<Levels, LevelsEvent>(effect: { () -> LevelsEvent? in .increaseLeft })

// Several feedbacks given as one: a spin lists the parts.
let both = Feedback(effects: [Feedback(effect: leftEffect), Feedback(effect: rightEffect)])

// A renderer and the user's events, both on one queue.
let ui = Feedback<Levels, LevelsEvent>(uiEffects: { levels in print(levels) }, { taps }, on: .main)

// A lens given as a closure.
let closeGap = Feedback<Levels, LevelsEvent>(
    effect: { (gap: Int) in gap > 0 ? .decreaseRight : nil },
    lensingOn: { $0.right - $0.left }
)

// A lens with a filter on its part.
let lowerEvenRight = Feedback<Levels, LevelsEvent>(
    effect: { (right: Int) in .decreaseRight },
    lensingOn: \.right,
    filteredBy: { $0.isMultiple(of: 2) }
)

// A Result filter: selects the states and extracts what the effect needs.
let raiseWhileApart = Feedback<Levels, LevelsEvent>(
    effect: { (gap: Int) in .increaseLeft },
    filteredByResult: { levels in
        levels.left < levels.right ? .success(levels.right - levels.left) : .failure(.effectIsNotExecuted)
    }
)

// snippet.declarative
// The reducer as an argument, the feedbacks in the block.
let spin = Spin(initialState: Levels(left: 0, right: 10), reducer: Reducer(levelsReducer)) {
    Feedback(effect: leftEffect)
    Feedback(effect: rightEffect)
}
// snippet.end
// snippet.hide

// The renderer sees every state, in order.
do {
    let loop = try levelsLoop(printer, Feedback(effect: leftEffect))
    for await state in loop.states() where state.left == 10 { break }
    await loop.stop()
    precondition(printed.values.map(\.left) == Array(0...10), "printer: \(printed.values)")
}

// The event source: every tap is reduced.
do {
    let loop = try levelsLoop(userInput)
    for _ in 0..<3 { tap.yield(.increaseLeft) }
    for await state in loop.states() where state.left == 3 { break }
    await loop.stop()
    tap.finish()
}

// A merged feedback is listed as its parts; the start-up effect adds one
// .increaseLeft, so the levels settle at (11, 0) as in the getting-started loop.
do {
    let started = Spin(initialState: Levels(left: 0, right: 10), feedbacks: [kickOff, both], reducer: Reducer(levelsReducer))
    precondition(started.feedbacks.count == 3, "effects: listed as parts")
    let loop = try started.start()
    for await state in loop.states() where state == Levels(left: 11, right: 0) { break }
    let report = await loop.stop()
    precondition(report.reduced == 21, "effects: \(report.reduced) reduced")
}

_ = ui  // compiled; its renders would need the main queue served

try await settles("closure lens", at: Levels(left: 0, right: 0), closeGap)
// 10 is even: lowered to 9, which the filter skips.
try await settles("lens with a filter", at: Levels(left: 0, right: 9), lowerEvenRight)
try await settles("Result filter", at: Levels(left: 10, right: 10), raiseWhileApart)
do {
    let loop = try spin.start()
    for await state in loop.states() where state == Levels(left: 10, right: 0) { break }
    await loop.stop()
    precondition(loop.state == Levels(left: 10, right: 0), "declarative: \(loop.state)")
}
