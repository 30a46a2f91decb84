@testable import Spindle
import SpindleTesting
import Testing

/// `TestSpin` and `TestFeedback` run the real engine (its feedback workers,
/// its effect router, its queue): a change in the engine's behaviour is
/// what a spec sees. Shown by changing it: a fault injected into the
/// engine's cancellation (debug builds, this test's task only) makes the
/// same spec see a stale event reduced.
@Suite struct EngineBehaviourTests {
    /// A search whose answers come after a debounce: typing again cancels
    /// the previous run (`.cancelOnNewState`), whose answer, ignoring the
    /// cancellation, comes late.
    static func run() -> TestSpin<[String], String> {
        let clock = TestClock()
        let runner = TestSpin(Spin(initialState: [String]()) {
            Feedback<[String], String>(effect: { (typed: [String]) async -> String? in
                guard let last = typed.last, !last.hasPrefix("answer") else { return nil }
                try? await clock.sleep(for: .seconds(1))  // ignores the cancellation
                return "answer to \(last)"
            })
            Reducer { $0 + [$1] }
        })
        runner.send("s")
        runner.send("sw")               // cancels the run for "s"
        clock.advance(by: .seconds(1))  // both runs answer
        runner.runUntilIdle()
        return runner
    }

    @Test("the engine discards a cancelled run's late event, and the spec sees it")
    func lateEventDiscarded() {
        let runner = Self.run()
        #expect(runner.state == ["s", "sw", "answer to sw"])
        #expect(runner.effectLog.discardedEvents() == ["answer to s"])
    }

    @Test("with the engine's discard broken, the same spec sees the stale event reduced")
    func brokenEngineIsSeen() {
        let runner = InjectedFault.$current.withValue(.acceptLateEvents) { Self.run() }
        #expect(runner.state == ["s", "sw", "answer to s", "answer to sw"])
        #expect(runner.effectLog.discardedEvents().isEmpty)
    }

    @Test("a feedback run alone sees the same engine: TestFeedback")
    func testFeedbackSeesTheEngine() {
        let clock = TestClock()
        let feedback = Feedback<String, String>(effect: { (query: String) async -> String? in
            try? await clock.sleep(for: .seconds(1))
            return "answer to \(query)"
        })
        let normal = TestFeedback(feedback)
        normal.send("s")
        normal.send("sw")
        clock.advance(by: .seconds(1))
        #expect(normal.events == ["answer to sw"])
        let broken = InjectedFault.$current.withValue(.acceptLateEvents) {
            let broken = TestFeedback(feedback)
            broken.send("s")
            broken.send("sw")
            clock.advance(by: .seconds(1))
            return broken
        }
        #expect(broken.events == ["answer to s", "answer to sw"])
    }
}
