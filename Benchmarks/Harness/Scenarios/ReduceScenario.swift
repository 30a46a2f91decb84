import Spindle
import Synchronization

/// A producer's event: an enum with an associated value (not a bare Int), as
/// an application's events are. 8 bytes, like an Int.
enum ProducerEvent: Sendable {
    case item(producer: UInt32, sequence: UInt32)
}

/// The reduce scenarios' state: the next expected sequence number of each
/// producer, so the reducer itself checks per-producer order (the contract's
/// rule 2) as it goes. Stored inline (a tuple, no heap), so the reducer's
/// copy of the state allocates nothing.
struct ProducerCursors: Sendable {
    static let maxProducers = 8
    private var next: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// Events reduced.
    private(set) var reduced = 0
    /// Events that arrived out of their producer's order.
    private(set) var violations = 0

    /// The next sequence number expected from `producer`.
    func expected(from producer: Int) -> UInt32 {
        withUnsafeBytes(of: next) { $0.load(fromByteOffset: producer * 4, as: UInt32.self) }
    }

    @inline(__always)
    mutating func accept(producer: UInt32, sequence: UInt32) {
        let inOrder = withUnsafeMutableBytes(of: &next) { raw -> Bool in
            let slot = raw.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: UInt32.self) + Int(producer)
            defer { slot.pointee = sequence &+ 1 }
            return slot.pointee == sequence
        }
        reduced &+= 1
        if !inOrder { violations &+= 1 }
    }
}

/// `reduce-<P>p`: P producer threads emit N events in total (N / P each) as
/// fast as they can into a loop with a trivial reducer and no feedback.
///
/// Clock: from the start gate opening (threads already created and parked)
/// until every event is reduced: the producers finish, then `loop.stop()`
/// drains the queue and joins the reducer thread. Rate: N / elapsed.
/// Checked after each run: emit accepted all N, the loop reduced exactly
/// the accepted events, and each producer's events arrived in order.
enum ReduceScenario {
    /// N for every reduce scenario: large enough that what each run pays
    /// once (a new producer thread placed by the kernel, the lane's first
    /// blocks, the stop) stays small beside the events at the engines'
    /// rates. The scenarios are read against each other, so all take the
    /// same N.
    static let defaultEvents = 20_000_000

    static func make(producers: Int) -> Scenario {
        precondition((1...ProducerCursors.maxProducers).contains(producers))
        return Scenario(
            name: "reduce-\(producers)p",
            producers: producers,
            description: """
                \(producers) producer thread\(producers == 1 ? " emits" : "s emit") N events in total \
                (.item(producer:sequence:)); trivial reducer, no feedback. Clock: start gate \
                opens → all reduced (producers done, then stop() drains). Per-producer order \
                and reduced == accepted are checked in the reducer's state.
                """,
            defaultEvents: defaultEvents,
            quickEvents: 200_000,
            // reduce-1p also on the two executors side by side (both with
            // the default queue): the pool's cost against a thread of its own.
            engines: producers == 1 ? Engine.queues + [.pool, .dedicated] : Engine.queues,
            measure: { run in try await measure(run, producers: producers, observer: nil) })
    }

    /// `reduce-batch`: `reduce-1p` with the producer emitting through
    /// `emit(contentsOf:)` in batches of 64: one synchronisation per batch
    /// instead of one per event. The same checks as `reduce-1p`. The
    /// producer writes each batch in place into one buffer (a store per
    /// event, as `reduce-1p`'s loop builds its event in registers): an
    /// array refilled with `append` cost a count update and checks per
    /// event, and the scenario measured the array about as much as the emit.
    static func makeBatch() -> Scenario {
        Scenario(
            name: "reduce-batch",
            producers: 1,
            description: """
                reduce-1p with emit(contentsOf:) in batches of \(batchSize): one producer thread, \
                N events, trivial reducer. The same clock and checks (per-producer order, \
                reduced == accepted) as reduce-1p, which it is read against.
                """,
            defaultEvents: defaultEvents,
            quickEvents: 200_000,
            engines: Engine.queues + [.pool, .dedicated],
            measure: { run in try await measure(run, producers: 1, observer: nil, batch: batchSize) })
    }

    static let batchSize = 64

    /// `reduce-1p-observed`: `reduce-1p` with a batch-level `SpinObserver`
    /// installed (`observesEachEvent` false, as the metrics observer): the
    /// cost of the hook when present. `reduce-1p` itself has no observer,
    /// which is the hook's absent case.
    static func makeObserved() -> Scenario {
        Scenario(
            name: "reduce-1p-observed",
            producers: 1,
            description: """
                reduce-1p with a SpinObserver installed that counts events per batch \
                (observesEachEvent false, like MetricsObserver): what the observer hook costs \
                when present. The observer's total must equal N.
                """,
            defaultEvents: defaultEvents,
            quickEvents: 200_000,
            measure: { run in try await measure(run, producers: 1, observer: BatchCounter()) })
    }

    /// Counts the events of each batch the reducer reports.
    private final class BatchCounter: SpinObserver {
        typealias State = ProducerCursors
        typealias Event = ProducerEvent
        let events = Atomic<Int>(0)
        var observesEachEvent: Bool { false }
        func batchReduced(_ batch: ReductionBatch) { events.add(batch.events, ordering: .relaxed) }
    }

    /// The reduce scenarios' reducer (also `spin-atom`'s): accepts each event into the cursors.
    static let reducer = Reducer<ProducerCursors, ProducerEvent> { state, event in
        var state = state
        switch event {
        case .item(let producer, let sequence): state.accept(producer: producer, sequence: sequence)
        }
        return state
    }

    private final class Tally: Sendable {
        let accepted = Atomic<Int>(0)
    }

    private static func measure(
        _ run: ScenarioRun, producers: Int, observer: BatchCounter?, batch: Int = 1
    ) async throws -> Sample {
        let perProducer = max(1, run.events / producers)
        let total = perProducer * producers
        var spin = Spin(initialState: ProducerCursors(), feedbacks: [], reducer: reducer)
        if let observer { spin = spin.observed(by: observer) }
        let loop = try spin.start(options: run.options(for: ProducerEvent.self))
        let tally = Tally()
        let threads = ProducerThreads(count: producers, name: "producer") { index in
            var accepted = 0
            let producer = UInt32(index)
            if batch > 1 {
                // `ProducerEvent` is a trivial type: slots are overwritten
                // with `initialize(to:)` and never deinitialized.
                let events = UnsafeMutableBufferPointer<ProducerEvent>.allocate(capacity: batch)
                defer { events.deallocate() }
                var sequence: UInt32 = 0
                while sequence < UInt32(perProducer) {
                    let end = min(sequence &+ UInt32(batch), UInt32(perProducer))
                    var count = 0
                    for next in sequence..<end {
                        (events.baseAddress.unsafelyUnwrapped + count).initialize(to: .item(producer: producer, sequence: next))
                        count += 1
                    }
                    accepted += loop.emit(contentsOf: UnsafeBufferPointer(rebasing: events[..<count])).accepted
                    sequence = end
                }
            } else {
                for sequence in 0..<UInt32(perProducer) where loop.emit(.item(producer: producer, sequence: sequence)) == .accepted {
                    accepted += 1
                }
            }
            tally.accepted.add(accepted, ordering: .relaxed)
        }
        try await threads.waitUntilReady(in: run)

        let region = MeasuredRegion.begin()
        threads.release()
        try await threads.waitUntilFinished(in: run)
        let report = await loop.stop()
        let (elapsed, allocations) = region.end()

        let accepted = tally.accepted.load(ordering: .relaxed)
        let final = loop.state
        try expect(accepted == total, "emit accepted \(accepted) of \(total) events", in: run)
        try expect(report.reduced == accepted, "reduced \(report.reduced) but accepted \(accepted)", in: run)
        try expect(final.reduced == accepted, "the reducer saw \(final.reduced) of \(accepted) events", in: run)
        try expect(final.violations == 0, "\(final.violations) events out of their producer's order", in: run)
        if let observer {
            let observed = observer.events.load(ordering: .relaxed)
            try expect(observed == accepted, "the observer counted \(observed) of \(accepted) events", in: run)
        }
        for producer in 0..<producers {
            try expect(final.expected(from: producer) == UInt32(perProducer),
                       "producer \(producer): last in-order sequence \(final.expected(from: producer)) of \(perProducer)",
                       in: run)
        }
        return Sample(events: total, elapsedNanoseconds: elapsed, allocations: allocations)
    }
}
