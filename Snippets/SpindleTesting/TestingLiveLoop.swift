// A test of a running loop: start it, wait for the state you expect on
// `states()`, stop it, then check what else happened.
import Spindle
// snippet.hide

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

let spin = Spin(initialState: Levels(left: 0, right: 10)) {
    Feedback(effect: leftEffect)
    Feedback(effect: rightEffect)
    Reducer(levelsReducer)
}
// snippet.show

// Collect the errors the effects report, if any.
let (errors, reportError) = AsyncStream.makeStream(of: EffectError.self)
var options = SpinOptions()
options.onEffectError = { reportError.yield($0) }

let loop = try spin.start(options: options)
for await state in loop.states() where state == Levels(left: 10, right: 0) {
    break  // every state arrives, in order: wait for the one you expect
}
let report = await loop.stop()  // always stop: nothing outlives the test
reportError.finish()

let statistics = loop.statistics  // reducedEvents 20, lateEventsDiscarded 0, effectErrors 0
var failures: [EffectError] = []
for await error in errors { failures.append(error) }  // []
// snippet.hide
precondition(loop.state == Levels(left: 10, right: 0), "final state \(loop.state)")
precondition(report.reduced == 20 && report.discarded == 0, "stop report \(report)")
precondition(statistics.reducedEvents == 20, "reduced \(statistics.reducedEvents)")
precondition(statistics.lateEventsDiscarded == 0, "late events \(statistics.lateEventsDiscarded)")
precondition(statistics.effectErrors == 0 && failures.isEmpty, "effect errors \(failures)")
