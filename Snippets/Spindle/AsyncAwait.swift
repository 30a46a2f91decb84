// Spindle with Swift concurrency: a feedback that reads the states as a
// stream, a spin as an AsyncSequence of states, a spin run as a task, and a
// loop's states() subscriptions.

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

/// Polls `condition` every millisecond until it holds; a hang guard fails
/// the program after ten seconds.
func waitUntil(_ what: String, _ condition: () -> Bool) async {
    let deadline = ContinuousClock.now + .seconds(10)
    while !condition() {
        precondition(ContinuousClock.now < deadline, "timed out waiting until \(what)")
        try? await Task.sleep(for: .milliseconds(1))
    }
}

/// Values recorded from any thread.
final class Recorded<Value: Sendable>: Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var stored: [Value] = []
    func append(_ value: Value) { lock.withLock { stored.append(value) } }
    var values: [Value] { lock.withLock { stored } }
}

/// Set when the object it is given to goes away.
final class ReleaseProbe: Sendable {
    let released: Recorded<Bool>
    init(_ released: Recorded<Bool>) { self.released = released }
    deinit { released.append(true) }
}

// snippet.show
// snippet.streamEffect
// Raises the left level for every state where it is below the right one.
let balancing = Feedback<Levels, LevelsEvent>(streamEffect: { states in
    states.compactMap { state in state.left < state.right ? .increaseLeft : nil }
})
// snippet.end
// snippet.hide
do {
    let loop = try Spin(initialState: Levels(left: 0, right: 10)) {
        balancing
        Reducer(levelsReducer)
    }.start()
    // One .increaseLeft per state with left < right: (0, 10) … (9, 10).
    for await state in loop.states() where state == Levels(left: 10, right: 10) { break }
    await loop.stop()
    precondition(loop.state == Levels(left: 10, right: 10), "stream form: \(loop.state)")
    precondition(loop.statistics.reducedEvents == 10, "stream form: \(loop.statistics.reducedEvents) reduced")
    precondition(loop.statistics.lateEventsDiscarded == 0, "stream form: an event discarded")
}

let printed = Recorded<Levels>()
func print(_ state: Levels) { printed.append(state) }
let released = Recorded<Bool>()

/// The spin.stream() example, with a feedback that tells when the loop
/// lets go of it.
func streamLevels() async {
    let probe = ReleaseProbe(released)
    let releaseProbe = Feedback<Levels, LevelsEvent>(effect: { (_: Levels) -> LevelsEvent? in
        _ = probe
        return nil
    })
// snippet.show

// snippet.stream
let spin = Spin(initialState: Levels(left: 0, right: 10)) {
    Feedback(effect: leftEffect)
    Feedback(effect: rightEffect)
    // snippet.hide
    releaseProbe
    // snippet.show
    Reducer(levelsReducer)
}

for await state in spin.stream() {
    print(state)
    if state.left >= state.right { break }  // stops the loop
}
// snippet.end
// snippet.hide
}

await streamLevels()
precondition(printed.values.first == Levels(left: 0, right: 10), "stream: the initial state first")
precondition(printed.values.dropLast().allSatisfy { $0.left < $0.right }, "stream: \(printed.values)")
precondition(printed.values.last.map { $0.left >= $0.right } == true, "stream: ends where the levels met")
// The loop stopped in the background and let go of its feedbacks.
await waitUntil("the stopped loop releases its feedbacks") { released.values == [true] }

let spin = Spin(initialState: Levels(left: 0, right: 10)) {
    Feedback(effect: leftEffect)
    Feedback(effect: rightEffect)
    Reducer(levelsReducer)
}
let loops = Recorded<SpinLoop<Levels, LevelsEvent>>()
// snippet.show

// snippet.run
let running = Task {
    try await spin.run(onStart: { loop in
        loop.emit(.increaseLeft)
        // snippet.hide
        loops.append(loop)
        // snippet.show
    })
}
// snippet.hide
await waitUntil("the running loop settles") { loops.values.first?.state == Levels(left: 11, right: 0) }
// snippet.show
// Later:
running.cancel()  // stops the loop; run() throws CancellationError
// snippet.end
// snippet.hide
do {
    try await running.value
    preconditionFailure("run() returned")
} catch {
    precondition(error is CancellationError, "run() threw \(error)")
}
precondition(loops.values.first?.isStopped == true, "run: the loop stopped")

// states(): the latest state, never more than one behind.
let loop = try spin.start()
let rendered = Recorded<Levels>()
func render(_ state: Levels) { rendered.append(state) }
// snippet.show

// snippet.latest
for await state in loop.states(bufferingPolicy: .latest) {
    render(state)  // never more than one state behind
    // snippet.hide
    if state == Levels(left: 10, right: 0) { break }
    // snippet.show
}
// snippet.end
// snippet.hide
await loop.stop()
// Each event moves the gap by one: in reduction order, left - right only grows.
let gaps = rendered.values.map { $0.left - $0.right }
precondition(rendered.values.last == Levels(left: 10, right: 0), "latest: ends on the final state")
precondition(zip(gaps, gaps.dropFirst()).allSatisfy { $0 < $1 }, "latest: in reduction order")
