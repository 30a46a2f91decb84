// Two spins connected by a gear: a counter counts to ten, and a lap board
// counts the laps and asks the counter to start again, up to three laps.

// snippet.hide
@_spi(Testing) import Spindle

/// Every gear event seen by a reader of `gear.events()`.
actor GearLog {
    var events: [String] = []
    func append(_ event: String) { events.append(event) }
}
// snippet.show
// snippet.gear
import Spindle

enum GearEvent: Sendable, Equatable {
    case counterReachedTen
    case resetCounter
}

let gear = Gear<GearEvent>()
// snippet.end

// snippet.counter
// Spin 1: the counter.
enum CounterEvent: Sendable { case increase, reset }

@Sendable func countUp(_ count: Int) -> CounterEvent? {
    count < 10 ? .increase : nil
}

@Sendable func counterReducer(_ count: Int, _ event: CounterEvent) -> Int {
    switch event {
    case .increase: return count + 1
    case .reset: return 0
    }
}

let counterSpin = Spin<Int, CounterEvent>(initialState: 0) {
    Feedback(effect: countUp)
    // state → gear, short form: when the state is 10, propagate .counterReachedTen
    Feedback(attachedTo: gear, catching: 10, propagating: .counterReachedTen)
    // gear → loop, short form: on .resetCounter, emit .reset
    Feedback(attachedTo: gear, catching: .resetCounter, emitting: .reset)
    Reducer(counterReducer)
}
// snippet.end

// snippet.board
// Spin 2: the lap board.
struct Board: Equatable, Sendable { var laps = 0 }
enum BoardEvent: Sendable { case lapCompleted }

@Sendable func boardReducer(_ board: Board, _ event: BoardEvent) -> Board {
    switch event {
    case .lapCompleted: return Board(laps: board.laps + 1)
    }
}

let boardSpin = Spin<Board, BoardEvent>(initialState: Board()) {
    // gear → loop, closure form
    Feedback(attachedTo: gear, fromGear: { (gearEvent: GearEvent) -> BoardEvent? in
        gearEvent == .counterReachedTen ? .lapCompleted : nil
    })
    // state → gear, closure form
    Feedback(attachedTo: gear, toGear: { (board: Board) -> GearEvent? in
        (1..<3).contains(board.laps) ? .resetCounter : nil
    })
    Reducer(boardReducer)
}
// snippet.end

// snippet.events
// Every gear event from now on, as an AsyncStream (Spin.Swift's eventStream).
let gearEvents = gear.events()
// snippet.end
// snippet.hide
let readers = gear.attachedCount  // the stream above
let log = GearLog()
let reader = Task {
    for await event in gearEvents {
        await log.append("\(event)")
        if await log.events.count == 5 { break }
    }
}
// snippet.show

// snippet.run
// Start the listener first: a gear delivers only to loops attached at that moment.
let board = try boardSpin.start()
// snippet.hide
precondition(gear.attachedCount == readers + 1, "the board is attached")
// snippet.show
let counter = try counterSpin.start()
// snippet.hide
precondition(gear.attachedCount == readers + 2, "the counter is attached")
// snippet.show

for await state in board.states() where state.laps == 3 { break }
await counter.stop()
await board.stop()
// snippet.end
// snippet.hide

// Three laps: the counter was reset twice and reached ten three times.
precondition(board.state == Board(laps: 3), "board: \(board.state)")
precondition(counter.state == 10, "counter: \(counter.state)")
precondition(counter.statistics.reducedEvents == 3 * 10 + 2, "counter: \(counter.statistics.reducedEvents) events")
// Each gear → loop feedback was detached when its loop stopped.
precondition(gear.attachedCount <= readers, "detached at stop")
// The gear's own stream saw every event propagated: three laps, two resets.
await reader.value
let seen = await log.events
precondition(seen.filter { $0 == "counterReachedTen" }.count == 3, "gear events: \(seen)")
precondition(seen.filter { $0 == "resetCounter" }.count == 2, "gear events: \(seen)")
