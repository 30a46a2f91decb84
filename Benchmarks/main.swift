// A first, minimal measurement until the full harness (scenarios, latency,
// allocations, JSON) lands: `reduce-1p` on each engine, median of 5 runs.
// Run with: swift run -c release benchmarks
import Dispatch
import Foundation
import Spindle

enum Event: Sendable {
    case add(Int)
}

let reducer = Reducer<Int, Event> { state, event in
    switch event {
    case .add(let value): state &+ value
    }
}

/// One producer thread emits `events` events; the clock stops when the loop
/// has reduced all of them (stop drains and joins the reducer thread).
func reduceOneProducer(queue: QueueKind, events: Int) async -> Double {
    let loop = Spin(initialState: 0, feedbacks: [], reducer: reducer).start(options: SpinOptions(queue: queue))
    let start = DispatchTime.now().uptimeNanoseconds
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        Thread {
            for index in 0..<events { loop.emit(.add(index)) }
            continuation.resume()
        }.start()
    }
    let report = await loop.stop()
    let elapsed = DispatchTime.now().uptimeNanoseconds - start
    precondition(report.reduced == events, "lost events: \(report.reduced) of \(events)")
    return Double(events) / (Double(elapsed) / 1e9)
}

let events = 2_000_000
let engines: [(String, QueueKind)] = [
    ("lockfree", .lockFree),
    ("ring", .bounded(capacity: 65_536, overflow: .block)),
    ("baseline", .baseline),
]
var medians: [String: Double] = [:]
print("reduce-1p: \(events) events, 1 producer, median of 5 runs")
for (name, queue) in engines {
    var rates: [Double] = []
    for _ in 0..<5 { rates.append(await reduceOneProducer(queue: queue, events: events)) }
    rates.sort()
    medians[name] = rates[2]
    print(String(format: "  %-9@ %7.2f M events/s (min %.2f, max %.2f)",
                 name, rates[2] / 1e6, rates[0] / 1e6, rates[4] / 1e6))
}
if let baseline = medians["baseline"] {
    for (name, _) in engines where name != "baseline" {
        print(String(format: "  %@ / baseline: %.2fx", name, medians[name]! / baseline))
    }
}
