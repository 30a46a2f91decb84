// Start a loop with options of your own, emit into it and read its answers,
// stop it, and read its statistics.

// snippet.hide
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

let spin = Spin(initialState: Levels(left: 0, right: 10)) {
    Feedback(effect: leftEffect)
    Feedback(effect: rightEffect)
    Reducer(levelsReducer)
}
// snippet.show

// snippet.options
var options = SpinOptions()                                       // the defaults
options.queue = .bounded(capacity: 4096, overflow: .dropNewest)
options.maxBatch = 256
let loop = try spin.start(options: options)  // throws a SpinExecutorError if they cannot run
// snippet.end

// snippet.emit
switch loop.emit(.increaseLeft) {
case .accepted: break  // it will be reduced exactly once (unless stopped with .discardPending)
case .dropped: break   // a full .bounded queue under .dropNewest refused it
case .stopped: break   // the loop is stopping or stopped; the event was not accepted
}
// snippet.end

// snippet.batch
let result = loop.emit(contentsOf: [.increaseLeft, .decreaseRight, .increaseLeft])
assert(result.accepted + result.dropped + result.stopped == 3)
// snippet.end

// snippet.hide
precondition(result.accepted == 3, "a roomy bounded queue accepts every event")
// snippet.show

// snippet.settled
let before = loop.state
loop.emit(.increaseLeft)
await loop.settled()  // every event accepted so far is reduced
print("left went from \(before.left) to \(loop.state.left) or further")
// snippet.end

// snippet.hide
precondition(loop.state.left > before.left, "settled() returned after the emit was reduced")
// snippet.show

// snippet.stop
let report = await loop.stop(.discardPending)
print("reduced \(report.reduced), discarded \(report.discarded)")
// snippet.end

// snippet.hide
precondition(loop.isStopped, "isStopped is true once stop has returned")
precondition(loop.emit(.increaseLeft) == .stopped, "an emit after stop is refused")
let again = await loop.stop()
precondition(again == report, "a second stop returns the same report")
// snippet.show

// snippet.statistics
let statistics = loop.statistics
print("reduced \(statistics.reducedEvents), refused after stop \(statistics.rejectedAfterStop)")
// snippet.end

// snippet.hide
precondition(statistics.reducedEvents == report.reduced, "the statistics agree with the stop report")
precondition(statistics.discardedAtStop == report.discarded, "discarded events are counted")
precondition(statistics.rejectedAfterStop == 1, "the refused emit is counted")
precondition(statistics.droppedEvents == 0, "nothing was dropped")

// snippet.show

// snippet.environment
/// What each start of the spin gets: a session's id and where it reports.
struct Session: Sendable {
    let id: Int
    let report: @Sendable (String) -> Void
}

let reportingSpin = Spin(initialState: Levels(left: 0, right: 4), reducer: Reducer(levelsReducer)) {
    Feedback(effect: leftEffect)
    Feedback.withEnvironment { (session: Session) in
        Feedback(effect: { (state: Levels) in session.report("session \(session.id): \(state.left)") })
    }
}
let first = try reportingSpin.start(environment: Session(id: 1, report: { print($0) }))
let second = try reportingSpin.start(environment: Session(id: 2, report: { print($0) }))
// snippet.end

// snippet.hide
await first.settled()
await second.settled()
precondition(first.state.left == 4 && second.state.left == 4, "both starts ran the spin")
precondition((try? reportingSpin.start()) == nil, "a start without its environment does not start")
await first.stop()
await second.stop()
// snippet.show
