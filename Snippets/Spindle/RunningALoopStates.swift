// Subscribe to a loop's states: once per call of `states()`, every state in
// reduction order; or, for a renderer, only the latest one.

// snippet.hide
import Spindle
import Synchronization

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

// No feedback: the events below are the only ones.
let spin = Spin(initialState: Levels(left: 0, right: 10)) {
    Reducer(levelsReducer)
}

let rendered = Mutex<[Levels]>([])
@Sendable func render(_ state: Levels) {
    rendered.withLock { $0.append(state) }
}

let loop = try spin.start()
// snippet.show

// snippet.renderer
let renderer = Task {
    for await state in loop.states(bufferingPolicy: .latest) {
        render(state)  // never more than one state behind
    }
    // The sequence ends after the final state, when the loop stops.
}
// snippet.end

// snippet.every
let states = loop.states()  // one subscription: call once, keep the sequence
loop.emit(contentsOf: Array(repeating: LevelsEvent.increaseLeft, count: 10))
// snippet.hide
var seen: [Levels] = []
// snippet.show
for await state in states {
    // snippet.hide
    seen.append(state)
    // snippet.show
    if state.left >= state.right { break }
}
// snippet.end

// snippet.stop
await loop.stop()
await renderer.value
// snippet.end

// snippet.hide
// The state current at the call, then every state in reduction order.
precondition(seen == (0...10).map { Levels(left: $0, right: 10) }, "states() skipped or repeated a state: \(seen)")
let drawn = rendered.withLock { $0 }
precondition(drawn.last == loop.state, "a .latest subscription always gets the final state")
precondition(
    zip(drawn, drawn.dropFirst()).allSatisfy { $0.left <= $1.left && $0.right >= $1.right },
    "what a .latest subscription takes stays in reduction order")
// On a stopped loop, states() yields the final state and ends.
var afterStop: [Levels] = []
for await state in loop.states() { afterStop.append(state) }
precondition(afterStop == [loop.state], "a stopped loop's states() is its final state")
// snippet.show
