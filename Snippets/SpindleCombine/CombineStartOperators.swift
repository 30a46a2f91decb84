// Spin.Swift's start operators: `AnyPublisher.stream(from:)`, a publisher of
// a spin's states with a loop per subscription, and `AnyPublisher.start(spin:)`,
// a loop owned by a cancellable.
import Spindle
import SpindleCombine
// snippet.hide
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

@Sendable func leftEffect(_ state: Levels) -> LevelsEvent? {
    state.left < state.right ? .increaseLeft : nil
}

@Sendable func rightEffect(_ state: Levels) -> LevelsEvent? {
    state.left < state.right ? .decreaseRight : nil
}

// Every state the subscriber receives, in order.
let (received, receiving) = AsyncStream.makeStream(of: Levels.self)

// Every state the feedbacks of the loop `AnyPublisher.start(spin:)` runs
// receive, through a hidden feedback (nil: not watched yet).
let watching = Mutex<AsyncStream<Levels>.Continuation?>(nil)
@Sendable func watch(_ state: Levels) -> LevelsEvent? {
    watching.withLock { _ = $0?.yield(state) }
    return nil
}
// snippet.show

// snippet.stream
let levelsSpin = Spin(initialState: Levels(left: 0, right: 10)) {
    Feedback(effect: leftEffect)
    Feedback(effect: rightEffect)
    // snippet.hide
    Feedback(effect: watch)
    // snippet.show
    Reducer(levelsReducer)
}

let printing = AnyPublisher.stream(from: levelsSpin)
    .sink { state in
        print(state)  // every reduced state, in order (not the initial one, as in Spin)
        // snippet.hide
        receiving.yield(state)
        // snippet.show
    }
// snippet.hide
var seen: [Levels] = []
for await state in received {
    seen.append(state)
    if state == Levels(left: 10, right: 0) { break }
}
precondition(seen.first != Levels(left: 0, right: 10), "reduced states only: the initial state is not published")
precondition(seen.count == 20, "one state per event: 20 states, not \(seen.count)")
// snippet.show
// Later:
printing.cancel()  // stops the loop; nothing more is sent
// snippet.end
// snippet.hide
// The balanced state is the last one (no feedback emits there): nothing is
// left to send after the cancel.
receiving.finish()
var extra: [Levels] = []
for await state in received { extra.append(state) }
precondition(extra.isEmpty, "no state should be sent after the balanced one, got \(extra)")

let (fed, feeding) = AsyncStream.makeStream(of: Levels.self)
watching.withLock { $0 = feeding }
// snippet.show

// snippet.start
let running = AnyPublisher.start(spin: levelsSpin)  // runs until cancelled or released
// snippet.hide
// The loop runs at once: its feedbacks get the initial state, then every
// state up to the balanced one, with no subscriber.
var startedFromInitialState = false
for await state in fed {
    if state == Levels(left: 0, right: 10) { startedFromInitialState = true }
    if startedFromInitialState && state == Levels(left: 10, right: 0) { break }
}
// snippet.show
// Later:
running.cancel()  // stops the loop
// snippet.end
