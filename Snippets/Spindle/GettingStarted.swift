// The levels example: two feedbacks move the left level up and the right
// level down until they meet, built with the result builder and with the
// Spinner chain, then started, fed an event, watched and stopped.

// snippet.types
import Spindle

struct Levels: Equatable, Sendable {
    var left: Int
    var right: Int
}

enum LevelsEvent: Sendable {
    case increaseLeft
    case decreaseRight
}

// The reducer: pure, no side effects.
@Sendable func levelsReducer(_ state: Levels, _ event: LevelsEvent) -> Levels {
    var state = state
    switch event {
    case .increaseLeft: state.left += 1
    case .decreaseRight: state.right -= 1
    }
    return state
}

// Two feedbacks: each looks at a state and may return an event.
@Sendable func leftEffect(_ state: Levels) -> LevelsEvent? {
    state.left < state.right ? .increaseLeft : nil
}

@Sendable func rightEffect(_ state: Levels) -> LevelsEvent? {
    state.left < state.right ? .decreaseRight : nil
}
// snippet.end

// snippet.builder
let spin = Spin(initialState: Levels(left: 0, right: 10)) {
    Feedback(effect: leftEffect)
    Feedback(effect: rightEffect)
    Reducer(levelsReducer)
}
// snippet.end

// snippet.hide
func spinnerSyntax() -> Spin<Levels, LevelsEvent> {
// snippet.show
// snippet.spinner
let spin = Spinner
    .initialState(Levels(left: 0, right: 10))
    .feedback(Feedback(effect: leftEffect))
    .feedback(Feedback(effect: rightEffect))
    .reducer(Reducer(levelsReducer))
// snippet.end
// snippet.hide
return spin
}

/// Runs `spin` as the article does, and checks what the article says of it.
func runLevels(_ spin: Spin<Levels, LevelsEvent>) async throws {
    precondition(spin.initialState == Levels(left: 0, right: 10), "the initial state")
    precondition(spin.feedbacks.count == 2, "two feedbacks")
    var seen: [Levels] = []
// snippet.show

// snippet.run
let loop = try spin.start()

// Emit from any thread. The result is discardable.
loop.emit(.increaseLeft)

// The latest published state, from any thread, without a lock.
print(loop.state)

// Every state in reduction order, starting with the current one.
for await state in loop.states() {
    print(state)
    // snippet.hide
    seen.append(state)
    // snippet.show
    if state.left >= state.right { break }
}
// snippet.hide
// Left running, the loop settles at (11, 0): each of the ten states with
// left < right (one per gap, 10 down to 1) makes both feedbacks emit, and
// the extra .increaseLeft adds one.
for await state in loop.states() where state == Levels(left: 11, right: 0) { break }
// snippet.show

// Stop: reduce what was accepted, cancel effects, end the streams.
await loop.stop()
// snippet.end
// snippet.hide
    precondition(seen.last.map { $0.left >= $0.right } == true, "the levels met: \(seen)")
    precondition(loop.isStopped, "the loop stopped")
    precondition(loop.state == Levels(left: 11, right: 0), "settled at (11, 0), not \(loop.state)")
    precondition(loop.statistics.reducedEvents == 1 + 2 * 10, "21 events, not \(loop.statistics.reducedEvents)")
    // Reduction order: each state seen is one event after the previous one.
    for (previous, next) in zip(seen, seen.dropFirst()) {
        precondition((next.left - previous.left) + (previous.right - next.right) == 1, "\(previous) -> \(next)")
    }
}

try await runLevels(spin)
try await runLevels(spinnerSyntax())
