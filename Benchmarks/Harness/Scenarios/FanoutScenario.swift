import Dispatch
import Spindle

/// One event of the fan-out stream.
enum TickEvent: Sendable {
    case tick(UInt32)
}

/// `fanout-8`: one producer thread emits N events; 8 feedbacks (sync
/// effects, each on its own serial queue, emitting nothing) observe the
/// states.
///
/// Every-state form (`fanout-8`): each feedback checks that it sees every
/// state, in order (the contract's rule 3): 0, 1, …, N. Conflated form
/// (`fanout-8-latest`, `Feedback.delivering(.latestState)`, a renderer's
/// choice): each checks that its states increase and end on N, and the
/// counter `deliveries_per_feedback` says how many it was handed. Before
/// the clock starts, the harness waits until all 8 have seen the initial
/// state. Clock: start gate opens → all 8 feedbacks have seen state N.
/// Rate: N / elapsed.
enum FanoutScenario {
    static let observers = 8

    static let scenario = Scenario(
        name: "fanout-8",
        producers: 1,
        description: """
            1 producer thread emits N events; 8 feedbacks (sync, each on its own queue, \
            emitting nothing) observe every state and check they see 0, 1, …, N in order. \
            Clock: start gate opens → all 8 have seen the final state. Rate: events/s.
            """,
        defaultEvents: 500_000,
        quickEvents: 50_000,
        measure: { try await measure($0, delivery: .everyState) })

    static let conflated = Scenario(
        name: "fanout-8-latest",
        producers: 1,
        description: """
            fanout-8 with conflated feedbacks (delivering(.latestState)): each may skip \
            states, checks they increase and end on N. Counter: deliveries_per_feedback. \
            Clock: start gate opens → all 8 have seen the final state. Rate: events/s.
            """,
        defaultEvents: 500_000,
        quickEvents: 50_000,
        measure: { try await measure($0, delivery: .latestState) })

    private static let reducer = Reducer<Int, TickEvent> { count, event in
        switch event {
        case .tick: count + 1
        }
    }

    /// One feedback's view: the next state it expects, and how many it saw
    /// out of order.
    ///
    /// `@unchecked Sendable`: each instance is touched by one feedback, whose
    /// effect runs one state at a time on its serial queue, and read by the
    /// harness only after the loop stopped (stop joins all of that).
    private final class Observer: @unchecked Sendable {
        var expected = 0
        var gaps = 0
        var deliveries = 0
    }

    private static func measure(_ run: ScenarioRun, delivery: StateDelivery) async throws -> Sample {
        let target = run.events
        let everyState = delivery == .everyState
        let primed = Countdown(observers)
        let finished = Countdown(observers)
        let views = (0..<observers).map { _ in Observer() }
        let feedbacks = views.enumerated().map { index, view in
            Feedback<Int, TickEvent>(
                effect: { (count: Int) -> TickEvent? in
                    // Every state: exactly the next one. Conflated: a later one.
                    if everyState ? count != view.expected : count < view.expected { view.gaps += 1 }
                    view.expected = count + 1
                    view.deliveries += 1
                    if count == 0 { primed.arrive() }
                    if count == target { finished.arrive() }
                    return nil
                },
                on: DispatchQueue(label: "fanout-\(index)")
            ).delivering(delivery)
        }
        let loop = try Spin(initialState: 0, feedbacks: feedbacks, reducer: reducer).start(options: run.options(for: TickEvent.self))
        let producer = ProducerThreads(count: 1, name: "producer") { _ in
            for index in 0..<UInt32(target) { loop.emit(.tick(index)) }
        }
        try await primed.wait(timeout: .seconds(30), "the feedbacks to see the initial state", in: run)
        try await producer.waitUntilReady(in: run)

        let region = MeasuredRegion.begin()
        producer.release()
        try await finished.wait(timeout: run.timeout, "all \(observers) feedbacks to see state \(target)", in: run)
        let (elapsed, allocations) = region.end()

        try await producer.waitUntilFinished(in: run)
        let report = await loop.stop()
        try expect(report.reduced == target, "reduced \(report.reduced) events, expected \(target)", in: run)
        for (index, view) in views.enumerated() {
            try expect(view.gaps == 0 && view.expected == target + 1,
                       "feedback \(index) skipped or reordered states (\(view.gaps) gaps, last \(view.expected - 1))",
                       in: run)
        }
        let deliveries = views.map(\.deliveries).reduce(0, +) / observers
        return Sample(
            events: target, elapsedNanoseconds: elapsed, allocations: allocations,
            counters: everyState ? [:] : ["deliveries_per_feedback": deliveries])
    }
}
