// Where a feedback runs: on the loop's executor (the default), on a queue it
// names, or on the queue the whole loop runs on; and how many states it is
// handed: every one (the default) or only the latest.

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

/// What a feedback was handed, in order, from any thread.
final class Seen: Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var states: [Levels] = []
    func append(_ state: Levels) { lock.withLock { states.append(state) } }
    var values: [Levels] { lock.withLock { states } }
}

/// What the renderer below drew.
let drawn = Seen()
@Sendable func draw(_ levels: Levels) { drawn.append(levels) }

// snippet.show
// snippet.queues
import Dispatch

let effects = DispatchQueue(label: "levels.effects")

let a = Feedback(effect: leftEffect, on: effects)            // label form
let b = Feedback(effect: rightEffect).execute(on: effects)   // method form

// The whole loop on one serial queue: its reducer, and every feedback that
// names no queue. (Spin.Swift's `executeOn:`: Spindle chooses where a loop
// runs when it starts.)
let spin = Spin(initialState: Levels(left: 0, right: 10)) {
    Feedback(effect: leftEffect)
    Feedback(effect: rightEffect)
    Reducer(levelsReducer)
}
let loop = try spin.start(options: SpinOptions(executor: .queue(effects)))
// snippet.end
// snippet.hide
for await state in loop.states() where state == Levels(left: 10, right: 0) { break }
await loop.stop()
precondition(loop.state == Levels(left: 10, right: 0), "the loop's queue: \(loop.state)")
let spinner = Spinner.initialState(Levels(left: 0, right: 10))
    .feedback(a)
    .feedback(b)
    .reducer(Reducer(levelsReducer))
for levels in [spin, spinner] {
    let loop = try levels.start()
    for await state in loop.states() where state == Levels(left: 10, right: 0) { break }
    await loop.stop()
    precondition(loop.state == Levels(left: 10, right: 0), "queues: \(loop.state)")
}
// snippet.show

// snippet.inline
let inline = Feedback(effect: leftEffect).executeOnReducerThread()
// snippet.end
// snippet.hide
do {
    let handed = Seen()
    let loop = try Spin(initialState: Levels(left: 0, right: 10)) {
        Feedback(effect: leftEffect).execute(on: effects).executeOnReducerThread()
        Feedback<Levels, LevelsEvent>(effect: { state in handed.append(state) }).executeOnReducerThread()
        Reducer(levelsReducer)
    }.start()
    for await state in loop.states() where state == Levels(left: 10, right: 10) { break }
    let report = await loop.stop()
    precondition(report.reduced == 10, "inline: \(report.reduced) reduced")
    // The initial state and the ten new ones, in order.
    precondition(handed.values.map(\.left) == Array(0...10), "inline: \(handed.values)")
}
// snippet.show

// snippet.latest
let screen = DispatchQueue(label: "levels.screen")

let render = Feedback<Levels, LevelsEvent>(effect: { levels in
    draw(levels)
}, on: screen).delivering(.latestState)
// snippet.end
// snippet.hide
do {
    let loop = try Spin(initialState: Levels(left: 0, right: 100_000), feedbacks: [render], reducer: Reducer(levelsReducer)).start()
    let accepted = loop.emit(contentsOf: repeatElement(LevelsEvent.increaseLeft, count: 100_000)).accepted
    precondition(accepted == 100_000, "latest: \(accepted) accepted")
    // The latest state always gets drawn.
    await waitUntil("the final state is drawn") { drawn.values.last == Levels(left: 100_000, right: 100_000) }
    await loop.stop()
    let lefts = drawn.values.map(\.left)
    // Conflated, but in reduction order: each drawn state is newer than the last.
    precondition(zip(lefts, lefts.dropFirst()).allSatisfy { $0 < $1 }, "latest: out of order")
    print("drew \(lefts.count) of 100001 states")
}

/// Polls `condition` every millisecond until it holds; a hang guard fails
/// the program after ten seconds.
func waitUntil(_ what: String, _ condition: () -> Bool) async {
    let deadline = ContinuousClock.now + .seconds(10)
    while !condition() {
        precondition(ContinuousClock.now < deadline, "timed out waiting until \(what)")
        try? await Task.sleep(for: .milliseconds(1))
    }
}
