// Feedback specs: one feedback's effect, run in a real loop over a list of
// states, and the events the engine reduced from it.
import Spindle
import SpindleTesting
// snippet.hide
import Dispatch

struct Levels: Equatable, Sendable {
    var left: Int
    var right: Int
}

enum LevelsEvent: Equatable, Sendable {
    case increaseLeft
    case decreaseRight
}

@Sendable func leftEffect(_ state: Levels) -> LevelsEvent? {
    state.left < state.right ? .increaseLeft : nil
}

/// When each run of `slowDouble` started, to tell whether the machine kept
/// the pace that the `.cancelOnNewState` result depends on.
final class Starts: @unchecked Sendable {
    private let lock = DispatchQueue(label: "starts")
    private var instants: [Int: ContinuousClock.Instant] = [:]
    func record(_ n: Int) { lock.sync { instants[n] = .now } }
    var all: [Int: ContinuousClock.Instant] { lock.sync { instants } }
}
let starts = Starts()
// snippet.show

// snippet.levels
let result = await FeedbackSpec<Levels, LevelsEvent>(effect: leftEffect)
    .run(states: [Levels(left: 0, right: 2), Levels(left: 1, right: 2), Levels(left: 2, right: 2)])

let events = result.events                      // [.increaseLeft, .increaseLeft]
let lastStepEvents = result.events(forStep: 2)  // []: the levels have met
// snippet.end
// snippet.hide
precondition(events == [.increaseLeft, .increaseLeft], "events \(events)")
precondition(lastStepEvents.isEmpty, "step 2 emitted \(lastStepEvents)")
precondition(result.runSteps == [0, 1, 2], "every state should start a run: \(result.runSteps)")
precondition(result.settled, "a synchronous effect should settle")
// snippet.show

// snippet.strategies
@Sendable func slowDouble(_ n: Int) async -> Int? {
    // snippet.hide
    starts.record(n)
    // snippet.show
    try? await Task.sleep(for: .milliseconds(200))  // a cancelled run wakes early…
    return n * 2                                    // …and its answer is discarded
}

let cancelling = await FeedbackSpec<Int, Int>(effect: slowDouble, applying: .cancelOnNewState)
    .run(states: [1, 2, 3], pacing: .immediately)
let reduced = cancelling.events            // [6]: runs 0 and 1 were overtaken
let overtaken = cancelling.cancelledSteps  // [0, 1]

let continuing = await FeedbackSpec<Int, Int>(effect: slowDouble, applying: .continueOnNewState)
    .run(states: [1, 2, 3], pacing: .immediately)
let allReduced = continuing.events.sorted()    // [2, 4, 6]: every run's answer is reduced
let noneOvertaken = continuing.cancelledSteps  // []
// snippet.end
// snippet.hide
// Whatever the pace: the last run is never overtaken, and no answer but
// the runs' own is reduced.
precondition(cancelling.events.last == 6, "the last run's answer should be reduced: \(cancelling.events)")
precondition(Set(cancelling.events).isSubset(of: [2, 4, 6]), "unexpected events \(cancelling.events)")
// The overtaking is certain only if each state reached the feedback within
// slowDouble's sleep of the previous run's start; on a machine too busy for
// that, the claim is not checked (the states and the engine are still).
let begun = starts.all
let keptPace = [(1, 2), (2, 3)].allSatisfy { earlier, later in
    guard let start = begun[earlier], let next = begun[later] else { return false }
    return next - start < .milliseconds(200)
}
if keptPace {
    precondition(reduced == [6], "runs 0 and 1 should have been overtaken: \(reduced)")
    precondition(overtaken == [0, 1], "cancelled steps \(overtaken)")
}
precondition(allReduced == [2, 4, 6], "every run's answer should be reduced: \(allReduced)")
precondition(noneOvertaken.isEmpty, "no run should be cancelled: \(noneOvertaken)")
