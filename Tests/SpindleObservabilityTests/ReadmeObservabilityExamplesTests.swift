import Foundation
import Logging
import MetricsTestKit
import Spindle
import SpindleMetrics
import SpindleReplay
import SpindleLevelsFixture
import SpindleTestSupport
import Testing

// The README's "Observing a loop" and "Record and replay" snippets, compiled
// and run. The levels types are the README's (SpindleLevelsFixture's, Codable
// for recording).

let spin = Spin(initialState: Levels(left: 0, right: 10)) {
    Feedback(effect: leftEffect)
    Feedback(effect: rightEffect)
    Reducer(levelsReducer)
}

// README: the first snippet.
struct PrintReductions: SpinObserver {
    func eventReduced(_ event: LevelsEvent, newState: Levels, reduction: Int) {
        print("#\(reduction): \(event) -> \(newState)")
    }
}

@Suite("README: observing, record and replay")
struct ReadmeObservabilityExamplesTests {
    @Test("an observer, a logger and metrics on the levels spin")
    func observers() async throws {
        let loop = spin.observed(by: PrintReductions()).start()
        #expect(await eventually { loop.state.left >= loop.state.right })
        await loop.stop()

        var logger = Logger(label: "levels")
        logger.logLevel = .debug
        let logged = spin.observed(by: LoggingObserver(logger: logger, level: .debug)).start()
        #expect(await eventually { logged.state.left >= logged.state.right })
        await logged.stop()

        // The README's snippet uses the bootstrapped backend; here a test one.
        let metrics = TestMetrics()
        let measured = spin
            .observed(by: MetricsObserver<Levels, LevelsEvent>(dimensions: [("loop", "levels")], factory: metrics))
            .start()
        #expect(await eventually { measured.state.left >= measured.state.right })
        let report = await measured.stop()
        let reduced = try metrics.expectCounter("spindle_events_reduced", [("loop", "levels")]).totalValue
        #expect(reduced == Int64(report.reduced))
    }

    @Test("record the levels spin and replay it")
    func recordAndReplay() async throws {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("levels-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }

        let recorder = try SpinRecorder<Levels, LevelsEvent>(file: url)   // LevelsEvent: Codable (and Levels, for the header)
        let loop = spin.observed(by: recorder).start()
        #expect(await eventually { loop.state.left >= loop.state.right })
        await loop.stop()
        try await recorder.waitUntilWritten()

        let recording = try SpinRecording<LevelsEvent>(contentsOf: url)
        let states = recording.replay(spin)     // the initial state, then one state per reduction
        #expect(states.last == loop.state)
        #expect(states.first == Levels(left: 0, right: 10))
        #expect(try recording.initialState(as: Levels.self) == Levels(left: 0, right: 10))
        let text = try String(contentsOf: url, encoding: .utf8)
        #expect(text.hasPrefix(#"{"format":"spindle-recording","initial_state":{"left":0,"right":10},"version":1}"#))
    }
}
