// A counter spin: a pure reducer, one feedback that asks for the next step,
// and a loop that runs it on Spindle's shared pool of reducer threads.
import Spindle

enum Tick: Sendable { case increment }

let spin = Spin(initialState: 0) {
    Feedback(effect: { (count: Int) -> Tick? in count < 5 ? .increment : nil })
    Reducer { (count: Int, _: Tick) in count + 1 }
}

let loop = try spin.start()                   // the default executor: the shared pool
for await count in loop.states() where count == 5 { print("counted to", count); break }
let report = await loop.stop()                // drains, cancels effects, leaves the pool
// snippet.hide
precondition(report.reduced == 5, "the feedback should have asked for exactly 5 increments, got \(report.reduced)")
precondition(loop.state == 5, "final state \(loop.state), expected 5")
