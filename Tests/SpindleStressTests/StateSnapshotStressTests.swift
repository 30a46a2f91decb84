import Foundation
@_spi(Testing) @testable import Spindle
import Testing
import SpindleTestSupport

/// A state whose three fields always agree: a read that mixed two states,
/// or read a box being written, shows fields that disagree (and a string
/// read while its box is rewritten may be freed memory, which the
/// sanitizers see).
struct SnapshotCount: Sendable {
    var count = 0
    var text = "0"
    var echo = 0

    var isWhole: Bool { echo == count && text == String(count) }
}

extension StressSuite {
    /// The state snapshot under readers: threads read `loop.state` without
    /// pause while the loop publishes a state per event (a budget of one
    /// event per slice), so readers are often inside the box the next
    /// publish would reuse, and the reducer takes another box. Every read
    /// is a whole state, each reader's reads never go back, the final
    /// state is the last one reduced, and every object is freed.
    @Suite("State snapshots under readers")
    struct StateSnapshotStressTests {
        @Test("readers on other threads see whole states, in order, while the loop publishes each")
        func readersSeeWholeStatesInOrder() async throws {
            // The premise, a publish that found a reader inside the box it
            // meant to reuse (the snapshot then holds a third box), is
            // checked; a run without it is run again, never failed on (nor
            // passed).
            var boxes = 0
            for attempt in 1...3 {
                boxes = try await runOnce(attempt: attempt)
                if boxes > 2 { break }
            }
            #expect(boxes > 2, "no publish found a reader in its spare box in 3 runs")
        }

        /// One run; returns how many boxes the snapshot held at the end.
        private func runOnce(attempt: Int) async throws -> Int {
            let baseline = await LiveBaseline.settle()
            var boxes = 0
            let events = max(20_000, StressScale.eventsPerQueue / 50)
            let readers = 3
            let torn = Counter()
            let wentBack = Counter()
            let reads = Counter()
            do {
                let spin = Spin<SnapshotCount, Int>(
                    initialState: SnapshotCount(), feedbacks: [],
                    reducer: Reducer { state, _ in
                        let next = state.count + 1
                        return SnapshotCount(count: next, text: String(next), echo: next)
                    })
                let loop = try spin.start(options: SpinOptions(maxBatch: 1))
                let finished = await onThreads(readers + 1) { index in
                    guard index < readers else {
                        for event in 0..<events { _ = loop.emit(event) }
                        return
                    }
                    // Until this reader sees the last state (a positive
                    // signal: the producer's emits are all accepted).
                    var last = 0
                    var count = 0
                    while last < events {
                        let state = loop.state
                        count += 1
                        if !state.isWhole { torn.add() }
                        if state.count < last { wentBack.add() }
                        last = max(last, state.count)
                    }
                    reads.add(count)
                }
                #expect(finished, "the readers or the producer did not finish: a hang")
                let report = await loop.stop()
                #expect(report.reduced == events)
                #expect(loop.state.count == events && loop.state.isWhole)
                boxes = loop.stateBoxCount
                stressLine("SPINDLE-STRESS snapshot attempt \(attempt): \(events) states published, \(reads.current) reads by \(readers) threads, \(boxes) boxes")
            }
            #expect(torn.current == 0, "\(torn.current) reads mixed two states")
            #expect(wentBack.current == 0, "\(wentBack.current) reads went back to an older state")
            await baseline.expectReturned()
            return boxes
        }
    }
}
