import Spindle
import Testing

extension StressSuite {
@Suite("Live objects")
struct LiveObjectsTests {
    @Test("a started, stopped and released loop counts up, then back down")
    func loopLifecycleCounts() async throws {
        let before = SpindleLiveObjects.current
        do {
            let loop = Spinner.initialState(0)
                .feedback(Feedback<Int, Int>(effect: { (_: Int) -> Int? in nil }))
                .reducer(Reducer { state, event in state + event })
                .start()
            let running = SpindleLiveObjects.current
            #expect(running.loops >= before.loops + 1)
            #expect(running.reducerThreads >= before.reducerThreads + 1)
            #expect(running.feedbackWorkers >= before.feedbackWorkers + 1)
            #expect(running.eventQueues >= before.eventQueues + 1)
            _ = loop.emit(1)
            await loop.stop()
        }
        // Other suites may run loops in parallel: wait for ours to go.
        let deadline = ContinuousClock.now + .seconds(10)
        while SpindleLiveObjects.current.loops > before.loops, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(SpindleLiveObjects.current.loops <= before.loops)
    }
}
}
