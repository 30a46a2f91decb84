import Spindle
import SpindleAtoms
import Synchronization

/// `spin-atom`: `reduce-1p`'s loop (its events, reducer and checks), flooded
/// by one producer thread, as a `SpinAtom` in a store with 1,000 derived
/// atoms watching its state (`watched`), and started directly with no store
/// (`unwatched`, the yardstick). Both loops have the default options (the
/// shared pool, the lock-free queue), and the producer emits straight into
/// the loop (`AtomStore.loop(of:)` gives the atom's).
///
/// Each derived atom is the loop's reduced count + its index, so every state
/// the graph takes in recomputes all 1,000 and tells their watchers. States
/// enter the graph conflated: the loop never waits for it. Clock, as in
/// `reduce-1p`: the start gate opens → the producer done and `stop()` has
/// drained the loop. Rate: the loop's events/s. Then, untimed, the harness
/// waits until every watcher has seen its atom's final value (N + index):
/// the positive signal that the graph got to the final state
/// (`watcher_lag_ns`: how long after the stop). Checked: `reduce-1p`'s
/// checks, the final values, and no watcher ever seeing a value go down.
enum SpinAtomScenario {
    static let views = 1_000

    static let scenario = Scenario(
        name: "spin-atom",
        producers: 1,
        description: """
            reduce-1p's loop flooded by 1 producer thread: as a SpinAtom with 1,000 derived \
            atoms (its reduced count + index) watched (watched), and the same spin started \
            directly, no store (unwatched, the yardstick). Clock: start gate opens → producer \
            done and stop() drained. Rate: the loop's events/s. Then every watcher must see its \
            atom's final value (N + index; watcher_lag_ns after the stop). Counter graph_states: \
            the states the graph took in (conflated).
            """,
        defaultEvents: ReduceScenario.defaultEvents,
        quickEvents: 200_000,
        engines: [.watched, .unwatched],
        yardstick: .unwatched,
        measure: measure)

    private static func measure(_ run: ScenarioRun) async throws -> Sample {
        let total = run.events
        switch run.engine {
        case .unwatched:
            let loop = try spin.start(options: SpinOptions())
            let flood = try await Flood(loop: loop, total: total, in: run)
            return Sample(events: total, elapsedNanoseconds: flood.elapsed, allocations: flood.allocations)
        case .watched:
            let store = AtomStore()
            let book = ViewBook(views: views, target: total)
            var subscriptions: [AtomSubscription<Int>] = []
            defer {
                for subscription in subscriptions { subscription.cancel() }
                store.close()
                book.deallocate()
            }
            for index in 0..<views {
                subscriptions.append(try store.watch(FloodView(index: index)) { book.saw(index, $0) })
            }
            guard let loop = store.loop(of: FloodAtom()) else {
                throw BenchmarkFailure(scenario: run.scenario, engine: run.engine.rawValue, message: "the spin atom's loop did not start")
            }
            let flood = try await Flood(loop: loop, total: total, in: run)
            let stopped = MonotonicClock.now()
            try await book.finished.wait(timeout: run.timeout, "the \(views) watchers to see the final state", in: run)
            let lag = MonotonicClock.now() &- stopped
            try expect(book.regressions == 0, "watchers saw a value go down \(book.regressions) times", in: run)
            for index in 0..<views {
                try expect(book.last[index] == total + index,
                           "watcher \(index) ended on \(book.last[index]), expected \(total + index)", in: run)
            }
            let states = book.updates[0]
            return Sample(
                events: total, elapsedNanoseconds: flood.elapsed, allocations: flood.allocations,
                counters: ["graph_states": states, "watcher_lag_ns": Int(lag)])
        default:
            preconditionFailure("spin-atom has no engine \(run.engine)")
        }
    }

    static let spin = Spin(initialState: ProducerCursors(), feedbacks: [], reducer: ReduceScenario.reducer)

    /// One flood of `loop`, measured and checked as `reduce-1p`'s.
    private struct Flood {
        let elapsed: UInt64
        let allocations: AllocationCount?

        init(loop: SpinLoop<ProducerCursors, ProducerEvent>, total: Int, in run: ScenarioRun) async throws {
            let accepted = Accepted()
            let producer = ProducerThreads(count: 1, name: "producer") { _ in
                var count = 0
                for sequence in 0..<UInt32(total) where loop.emit(.item(producer: 0, sequence: sequence)) == .accepted {
                    count += 1
                }
                accepted.count.store(count, ordering: .relaxed)
            }
            try await producer.waitUntilReady(in: run)
            let region = MeasuredRegion.begin()
            producer.release()
            try await producer.waitUntilFinished(in: run)
            let report = await loop.stop()
            (elapsed, allocations) = region.end()

            let emitted = accepted.count.load(ordering: .relaxed)
            let final = loop.state
            try expect(emitted == total, "emit accepted \(emitted) of \(total) events", in: run)
            try expect(report.reduced == emitted, "reduced \(report.reduced) but accepted \(emitted)", in: run)
            try expect(final.reduced == emitted, "the reducer saw \(final.reduced) of \(emitted) events", in: run)
            try expect(final.violations == 0, "\(final.violations) events out of order", in: run)
        }
    }

    /// The events the producer had accepted, read once it finished.
    private final class Accepted: Sendable {
        let count = Atomic<Int>(0)
    }

    /// What the watchers saw. Deliveries come one at a time, in update
    /// order, each after the store's exclusion was left by the operation
    /// that queued it (possibly on different threads, ordered by the
    /// store's lock); the harness reads the book after `finished`.
    private final class ViewBook: @unchecked Sendable {
        let last: UnsafeMutableBufferPointer<Int>
        let updates: UnsafeMutableBufferPointer<Int>
        private let regressionCount = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        let finished: Countdown
        let target: Int

        init(views: Int, target: Int) {
            last = .allocate(capacity: views)
            last.initialize(repeating: Int.min)
            updates = .allocate(capacity: views)
            updates.initialize(repeating: 0)
            regressionCount.initialize(to: 0)
            finished = Countdown(views)
            self.target = target
        }

        var regressions: Int { regressionCount.pointee }

        func saw(_ index: Int, _ value: Int) {
            if value < last[index] { regressionCount.pointee += 1 }
            last[index] = value
            updates[index] += 1
            if value == target + index { finished.arrive() }
        }

        func deallocate() {
            last.deallocate()
            updates.deallocate()
            regressionCount.deallocate()
        }
    }
}

/// `reduce-1p`'s loop as an atom.
struct FloodAtom: SpinAtom, Hashable {
    func spin(context: Context) throws(AtomError) -> Spin<ProducerCursors, ProducerEvent> {
        SpinAtomScenario.spin
    }
}

/// One of the 1,000 atoms derived from the loop: its reduced count + index.
struct FloodView: ValueAtom, Hashable {
    let index: Int

    func value(context: Context) throws(AtomError) -> Int {
        try context.watch(FloodAtom()).reduced &+ index
    }
}
