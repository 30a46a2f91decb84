// Publisher feedbacks: the levels example with one feedback in the state
// form (a publisher per state) and one in the stream form (one publisher
// for the loop's whole life).
// snippet.imports
#if canImport(Combine)
import Combine
#else
import OpenCombine  // Linux: OpenCombine, for Just and Empty
#endif
import Spindle
import SpindleCombine
// snippet.end
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
// snippet.show

// snippet.feedbacks
// State form: one subscription per state. Every state's event counts, as
// in the levels example (under the default strategy, a `Just` that comes
// back after a newer state would be discarded).
let raiseLeft = Feedback<Levels, LevelsEvent>(effect: { state in
    state.left < state.right
        ? Just(.increaseLeft).eraseToAnyPublisher()
        : Empty().eraseToAnyPublisher()
}, applying: .continueOnNewState)

// Stream form: one subscription for the loop's life.
let lowerRight = Feedback<Levels, LevelsEvent>(streamEffect: { states in
    states
        .filter { $0.left < $0.right }
        .map { _ in .decreaseRight }
        .eraseToAnyPublisher()
})
// snippet.end

// snippet.run
let spin = Spin(initialState: Levels(left: 0, right: 10)) {
    raiseLeft
    lowerRight
    Reducer(levelsReducer)
}

let loop = try spin.start()
for await state in loop.states() where state == Levels(left: 10, right: 0) {
    break  // both feedbacks emitted for each of the ten states where left < right
}
await loop.stop()
// snippet.end
// snippet.hide
// No event past the balance: one the feedbacks emitted before the stop is
// reduced by its drain, one after it would be counted as discarded.
precondition(loop.state == Levels(left: 10, right: 0), "the levels should settle at (10, 0), not \(loop.state)")
precondition(
    loop.statistics.reducedEvents == 20,
    "two events per state where left < right: 20 reduced, not \(loop.statistics.reducedEvents)")
precondition(
    loop.statistics.lateEventsDiscarded == 0,
    "no event should come late, \(loop.statistics.lateEventsDiscarded) did")
