import CSpindle
import Foundation
import Synchronization
import Testing
import SpindleTestSupport

/// What one emitter thread did, for the gate tests.
final class GateProbe: Sendable {
    let inside = Atomic<Bool>(false)
    /// Set just before the section is exited.
    let left = Atomic<Bool>(false)
}

extension CSpindleTarget {
    @Suite("spindle_gate: emit sections on urcu-bp")
    struct GateTests {
        /// The property stop relies on: the grace period does not end while a
        /// section that was open when it began is still open.
        @Test func waitForEmittersWaitsForAnOpenSection() throws {
            let probe = GateProbe()
            let emitter = TestThreads(1, name: "gate-holder") { _ in
                spindle_gate_enter()
                probe.inside.store(true, ordering: .sequentiallyConsistent)
                // Holds the section long enough that the wait below starts
                // while it is open; on a machine so slow that it does not,
                // the check passes without having been exercised, never
                // the other way round.
                Thread.sleep(forTimeInterval: 0.05)
                probe.left.store(true, ordering: .sequentiallyConsistent)
                spindle_gate_exit()
            }
            let deadline = ContinuousClock.now + hangGuard
            while !probe.inside.load(ordering: .sequentiallyConsistent), ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.001)
            }
            let entered = probe.inside.load(ordering: .sequentiallyConsistent)
            try #require(entered, "the holder never entered")
            spindle_gate_wait_for_emitters()
            // Read before the join: the section was open when the wait
            // began, so the grace period cannot have ended before its exit.
            let leftBeforeTheWaitEnded = probe.left.load(ordering: .sequentiallyConsistent)
            #expect(emitter.join())
            #expect(leftBeforeTheWaitEnded, "the grace period ended while the section was open")
        }

        @Test func sectionsNestAndGracePeriodsEnd() {
            spindle_gate_enter()
            spindle_gate_enter()
            spindle_gate_exit()
            spindle_gate_exit()
            // Other suites' loops may emit meanwhile (urcu-bp's registry is
            // process-wide), and liburcu sleeps 10 ms per round while a
            // section stays open, so no time is asserted: the check is that
            // every wait returns (a section left open would hang the test).
            for _ in 0..<10 { spindle_gate_wait_for_emitters() }
        }
    }
}
