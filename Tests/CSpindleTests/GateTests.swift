import CSpindle
import Foundation
import Synchronization
import Testing

/// What one emitter thread saw, for the gate tests.
final class GateProbe: Sendable {
    let inside = Atomic<Bool>(false)
    let leftAt = Mutex<ContinuousClock.Instant?>(nil)
}

extension CSpindleTarget {
    @Suite("spindle_gate: emit sections on urcu-bp")
    struct GateTests {
        /// The property stop relies on: the grace period does not end while a
        /// section that was open when it began is still open.
        @Test func waitForEmittersWaitsForAnOpenSection() throws {
            let probe = GateProbe()
            let holdFor = Duration.milliseconds(50)
            let emitter = TestThreads(1, name: "gate-holder") { _ in
                spindle_gate_enter()
                probe.inside.store(true, ordering: .sequentiallyConsistent)
                Thread.sleep(forTimeInterval: 0.05)
                probe.leftAt.withLock { $0 = ContinuousClock.now }
                spindle_gate_exit()
            }
            let deadline = ContinuousClock.now + .seconds(5)
            while !probe.inside.load(ordering: .sequentiallyConsistent), ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.001)
            }
            let began = ContinuousClock.now
            spindle_gate_wait_for_emitters()
            let ended = ContinuousClock.now
            #expect(emitter.join(timeoutSeconds: 10))
            let left = try #require(probe.leftAt.withLock { $0 }, "the grace period ended before the section")
            #expect(left <= ended)
            #expect(ended - began >= holdFor / 2)
        }

        @Test func sectionsNestAndGracePeriodsEnd() {
            spindle_gate_enter()
            spindle_gate_enter()
            spindle_gate_exit()
            spindle_gate_exit()
            // Other suites' loops may emit meanwhile (urcu-bp's registry is
            // process-wide), and liburcu sleeps 10 ms per round while a
            // section stays open: the bound catches a hang, not a slow round.
            let start = ContinuousClock.now
            for _ in 0..<10 { spindle_gate_wait_for_emitters() }
            #expect(ContinuousClock.now - start < .seconds(10))
        }
    }
}
