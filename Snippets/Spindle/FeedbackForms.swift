// The shapes a feedback's effect can take: synchronous, async, async
// throwing, an AsyncSequence of events, filtered, lensed onto part of the
// state, and with dependencies passed before the state.

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

/// Polls `condition` every millisecond until it holds; a hang guard fails
/// the program after ten seconds.
func waitUntil(_ what: String, _ condition: () -> Bool) async {
    let deadline = ContinuousClock.now + .seconds(10)
    while !condition() {
        precondition(ContinuousClock.now < deadline, "timed out waiting until \(what)")
        try? await Task.sleep(for: .milliseconds(1))
    }
}

/// A loop of `feedbacks` and the levels reducer, from `initial`.
func levelsLoop(
    from initial: Levels = Levels(left: 0, right: 10),
    options: SpinOptions = SpinOptions(),
    _ feedbacks: Feedback<Levels, LevelsEvent>...
) throws -> SpinLoop<Levels, LevelsEvent> {
    try Spin(initialState: initial, feedbacks: feedbacks, reducer: Reducer(levelsReducer)).start(options: options)
}

// snippet.show
// snippet.sync
let left = Feedback<Levels, LevelsEvent>(effect: { state in
    state.left < state.right ? .increaseLeft : nil
})
// snippet.end
// snippet.hide
do {
    // One feedback, one event per state: it stops where the levels meet.
    let loop = try levelsLoop(left)
    for await state in loop.states() where state == Levels(left: 10, right: 10) { break }
    let report = await loop.stop()
    precondition(loop.state == Levels(left: 10, right: 10), "sync: \(loop.state)")
    precondition(report.reduced == 10, "sync: \(report.reduced) reduced")
}
// snippet.show

// snippet.async
@Sendable func slowLeft(_ state: Levels) async -> LevelsEvent? {
    try? await Task.sleep(for: .milliseconds(10))
    return state.left < state.right ? .increaseLeft : nil
}

let slow = Feedback(effect: slowLeft)
// snippet.end
// snippet.hide
do {
    let loop = try levelsLoop(slow)
    // Three events of our own: a new state cancels the run in flight, if any.
    for _ in 0..<3 { loop.emit(.increaseLeft) }
    // Each state starts one run. A run with left < right returns
    // .increaseLeft: reduced if it came before its run was cancelled,
    // discarded (and counted) if it came after.
    await waitUntil("every run answered") {
        let statistics = loop.statistics
        return loop.state.left + statistics.lateEventsDiscarded == 10 + 3
            && statistics.effectRunsStarted == loop.state.left + 1
    }
    precondition(loop.state.left >= 10, "async: \(loop.state)")
    precondition(loop.statistics.effectErrors == 0, "async: no errors")
    await loop.stop()
}
// snippet.show

// snippet.throwing
@Sendable func slowRight(_ state: Levels) async throws -> LevelsEvent? {
    try await Task.sleep(for: .milliseconds(50))  // throws when the run is cancelled
    return state.left < state.right ? .decreaseRight : nil
}

let spin = Spin(initialState: Levels(left: 0, right: 10)) {
    Feedback(effect: leftEffect)
    Feedback(effect: slowRight)
    Reducer(levelsReducer)
}
let loop = try spin.start(options: SpinOptions(onEffectError: { error in
    print("feedback \(error.feedbackIndex) threw \(error.underlying)")
}))
// snippet.end
// snippet.hide
// slowRight starts one run per state; the runs a newer state cancels throw
// CancellationError from Task.sleep, which never reaches the hook.
await waitUntil("the levels met and every state started a run") {
    loop.state.left >= loop.state.right
        && loop.statistics.effectRunsStarted == loop.statistics.reducedEvents + 1
}
precondition(loop.statistics.effectErrors == 0, "throwing: a cancelled run was reported")
await loop.stop()
precondition(loop.statistics.effectErrors == 0, "throwing: a cancelled run was reported")
// snippet.show

// snippet.sequence
// Emits .increaseLeft every 100 ms while the run lasts.
@Sendable func ticker(_ state: Levels) -> AsyncStream<LevelsEvent> {
    AsyncStream { continuation in
        let task = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(100))
                continuation.yield(.increaseLeft)
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
    }
}

let ticking = Feedback(effect: ticker)
// snippet.end
// snippet.hide
do {
    let loop = try levelsLoop(ticking)
    // The first tick makes a new state, which cancels the first iteration
    // and starts a second one.
    await waitUntil("a tick, and the first run cancelled") {
        loop.state.left >= 1 && loop.statistics.effectRunsCancelled >= 1
    }
    precondition(loop.statistics.effectRunsStarted >= 2, "sequence: a run per state")
    await loop.stop()
}
// snippet.show

// snippet.filtered
let ticksWhileApart = Feedback(effect: ticker, filteredBy: { $0.left < $0.right })
// snippet.end
// snippet.hide
do {
    let loop = try levelsLoop(from: Levels(left: 9, right: 10), ticksWhileApart)
    // The first tick makes (10, 10): filtered out, so the iteration started
    // for (9, 10) is not cancelled, and its second tick makes (11, 10).
    for await state in loop.states() where state.left >= 11 { break }
    precondition(loop.statistics.effectRunsStarted == 1, "filtered: one run")
    precondition(loop.statistics.effectRunsCancelled == 0, "filtered: nothing cancelled")
    await loop.stop()
}
// snippet.show

// snippet.lensed
let watchRight = Feedback<Levels, LevelsEvent>(
    effect: { (right: Int) in right > 5 ? .decreaseRight : nil },
    lensingOn: \.right
)
// snippet.end
// snippet.hide
do {
    let loop = try levelsLoop(watchRight)
    for await state in loop.states() where state.right == 5 { break }
    let report = await loop.stop()
    precondition(loop.state == Levels(left: 0, right: 5), "lensed: \(loop.state)")
    precondition(report.reduced == 5, "lensed: \(report.reduced) reduced")
}
// snippet.show

// snippet.dependencies
struct Limits: Sendable { let maxLeft: Int }

@Sendable func cappedLeft(_ limits: Limits, _ state: Levels) -> LevelsEvent? {
    state.left < min(limits.maxLeft, state.right) ? .increaseLeft : nil
}

let limits = Limits(maxLeft: 8)
let capped = Feedback(effect: { cappedLeft(limits, $0) })

// Two dependencies, async this time: the closure captures both.
@Sendable func pacedLeft(_ limits: Limits, _ pace: Duration, _ state: Levels) async throws -> LevelsEvent? {
    try await Task.sleep(for: pace)
    return state.left < min(limits.maxLeft, state.right) ? .increaseLeft : nil
}

let pace = Duration.milliseconds(1)
let paced = Feedback(effect: { try await pacedLeft(limits, pace, $0) })
// snippet.end
// snippet.hide
for feedback in [capped, paced] {
    let loop = try levelsLoop(feedback)
    for await state in loop.states() where state.left == 8 { break }
    let report = await loop.stop()
    precondition(loop.state == Levels(left: 8, right: 10), "dependencies: \(loop.state)")
    precondition(report.reduced == 8, "dependencies: \(report.reduced) reduced")
}
