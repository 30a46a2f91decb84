import CSpindle
import Foundation
import Spindle
import Testing
import SpindleTestSupport

extension StressSuite {
    /// Issue 4, item 10: deliberate data races that Thread Sanitizer must
    /// report. A silent TSan run proves nothing unless TSan is shown to be
    /// watching, so scripts/stress.sh runs each case with
    /// `SPINDLE_TSAN_CANARY=1` and fails unless that run reports
    /// "ThreadSanitizer" and fails. Off by default: each case is a real race.
    ///
    /// Without TSan these tests pass (nothing watches); under TSan they make
    /// the test run fail (TSan's exit code), which is the point.
    @Suite("TSan canary (SPINDLE_TSAN_CANARY=1)", .enabled(if: StressScale.canaryEnabled))
    struct TSanCanaryTests {
        /// The C target's racy helper: a plain load and store of a shared
        /// counter from two threads, no lock, no atomics.
        @Test func racyCIncrementIsReported() async {
            let counter = UnsafeMutablePointer<Int>.allocate(capacity: 1)
            counter.initialize(to: 0)
            let shared = UncheckedPointer(counter)
            await onThreads(2) { _ in
                for _ in 0..<10_000 { spindle_racy_increment(shared.pointer) }
            }
            counter.deallocate()
        }

        /// A race in Swift: a plain class field written from two threads.
        @Test func swiftFieldRaceIsReported() async {
            let box = RacyBox()
            await onThreads(2) { _ in
                for _ in 0..<10_000 { box.value += 1 }
            }
            #expect(box.value > 0)
        }

        /// Proves the payload slots are visible to TSan: the producer writes
        /// each slot *after* emitting its event, so nothing orders that
        /// write before the reducer's read. (The stress tests write before
        /// the emit; there the queue's happens-before edge orders them.)
        ///
        /// Whether a round leaves an unordered pair of accesses depends on
        /// how the runner meets the producer (a read after a later emit, or
        /// after the stop's hand-over, is ordered after the write), so a
        /// single round may leave none. The case runs `rounds` rounds, each
        /// on a fresh loop; TSan reports the first unordered pair it sees,
        /// and the script needs one report.
        @Test func payloadWrittenAfterTheEmitIsReported() async throws {
            let rounds = 10
            let perProducer = 20_000
            for _ in 0..<rounds {
                let payloads = PayloadSlots(producers: 1, perProducer: perProducer)
                let checker = OrderChecker(producers: 1, payloads: payloads)
                let loop = try Spin(initialState: 0, feedbacks: [], reducer: checker.reducer).start()
                await onThreads(1) { producer in
                    for sequence in 0..<perProducer {
                        loop.emit(Stamped(producer: producer, sequence: sequence))
                        payloads.write(producer: producer, sequence: sequence)
                    }
                }
                // The reducer reads every slot before the stop, whose
                // hand-over would order all the writes before it.
                #expect(await eventually { checker.progress.current == perProducer })
                await loop.stop()
            }
        }
    }
}

/// A class with a plain field, shared on purpose without synchronization.
final class RacyBox: @unchecked Sendable {
    // @unchecked: deliberately racy (the canary).
    var value = 0
}

/// Carries a raw pointer across threads for the canary.
struct UncheckedPointer: @unchecked Sendable {
    // @unchecked: the canary shares it on purpose.
    let pointer: UnsafeMutablePointer<Int>
    init(_ pointer: UnsafeMutablePointer<Int>) { self.pointer = pointer }
}
