// What a new state does to an async effect still running: under
// .cancelOnNewState the run is cancelled and its late answer is discarded;
// under .continueOnNewState every run's answer is reduced.

// snippet.hide
import Foundation
// snippet.show
// snippet.search
import Spindle

struct Search: Equatable, Sendable {
    var query = ""
    var pending = false          // a query waits for its answer
    var answers: [String] = []   // every answer reduced, in order
}

enum SearchEvent: Sendable {
    case typed(String)
    case answered(String)
}

@Sendable func searchReducer(_ search: Search, _ event: SearchEvent) -> Search {
    var search = search
    switch event {
    case .typed(let query):
        search.query = query
        search.pending = true
    case .answered(let answer):
        search.pending = false
        search.answers.append(answer)
    }
    return search
}

// A slow server that ignores cancellation: `try?` swallows the sleep's
// CancellationError, and the run answers anyway.
@Sendable func lookUp(_ search: Search) async -> SearchEvent? {
    try? await Task.sleep(for: .milliseconds(300))
    return .answered(search.query.uppercased())
}
// snippet.end

// snippet.hide
/// Polls `condition` every millisecond until it holds; a hang guard fails
/// the program after ten seconds.
func waitUntil(_ what: String, _ condition: () -> Bool) async {
    let deadline = ContinuousClock.now + .seconds(10)
    while !condition() {
        precondition(ContinuousClock.now < deadline, "timed out waiting until \(what)")
        try? await Task.sleep(for: .milliseconds(1))
    }
}

do {
// snippet.show
// snippet.cancel
let latestOnly = Spin(initialState: Search()) {
    Feedback(effect: lookUp, filteredBy: { $0.pending })  // .cancelOnNewState, the default
    Reducer(searchReducer)
}

let loop = try latestOnly.start()
loop.emit(.typed("a"))
loop.emit(.typed("ab"))  // cancels the run for "a": its answer is never reduced

for await search in loop.states() where !search.answers.isEmpty {
    print(search.answers)  // ["AB"]
    break
}
// snippet.end
// snippet.hide
    // The run for "a" answered after its cancellation: that answer was
    // counted as discarded, never reduced.
    await waitUntil("the cancelled run's answer is discarded") { loop.statistics.lateEventsDiscarded == 1 }
    await loop.stop()
    let statistics = loop.statistics
    precondition(loop.state.answers == ["AB"], "cancelOnNewState: \(loop.state.answers)")
    precondition(statistics.effectRunsStarted == 2, "cancelOnNewState: \(statistics.effectRunsStarted) runs")
    precondition(statistics.effectRunsCancelled == 1, "cancelOnNewState: \(statistics.effectRunsCancelled) cancelled")
    precondition(statistics.lateEventsDiscarded == 1, "cancelOnNewState: \(statistics.lateEventsDiscarded) discarded")
    precondition(statistics.reducedEvents == 3, "cancelOnNewState: two queries and one answer")
}

do {
// snippet.show
// snippet.continue
let everyAnswer = Spin(initialState: Search()) {
    Feedback(effect: lookUp, filteredBy: { $0.pending }, applying: .continueOnNewState)
    Reducer(searchReducer)
}

let loop = try everyAnswer.start()
loop.emit(.typed("a"))
loop.emit(.typed("ab"))  // the run for "a" goes on

for await search in loop.states() where search.answers.count == 2 {
    print(search.answers)  // "A" and "AB", in the order they came back
    break
}
// snippet.end
// snippet.hide
    await loop.stop()
    let statistics = loop.statistics
    precondition(loop.state.answers.sorted() == ["A", "AB"], "continueOnNewState: \(loop.state.answers)")
    precondition(statistics.effectRunsCancelled == 0, "continueOnNewState: a run was cancelled")
    precondition(statistics.lateEventsDiscarded == 0, "continueOnNewState: an answer was discarded")
}

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

@Sendable func slowLeft(_ state: Levels) async -> LevelsEvent? {
    try? await Task.sleep(for: .milliseconds(10))
    return state.left < state.right ? .increaseLeft : nil
}
// snippet.show

// snippet.levels
let everyRunCounts = Feedback(effect: slowLeft, applying: .continueOnNewState)
// snippet.end
// snippet.hide
do {
    let loop = try Spin(initialState: Levels(left: 0, right: 5)) {
        everyRunCounts
        Reducer(levelsReducer)
    }.start()
    for _ in 0..<3 { loop.emit(.increaseLeft) }
    // The five states with left < 5 each start a run that returns
    // .increaseLeft, and none is cancelled: five events, and our three.
    for await state in loop.states() where state.left == 8 { break }
    let statistics = loop.statistics
    precondition(statistics.effectRunsCancelled == 0, "levels: a run was cancelled")
    precondition(statistics.lateEventsDiscarded == 0, "levels: an event was discarded")
    await loop.stop()
    precondition(loop.state == Levels(left: 8, right: 5), "levels: \(loop.state)")
}
