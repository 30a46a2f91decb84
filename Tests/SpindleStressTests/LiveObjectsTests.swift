@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport

extension StressSuite {
@Suite("Live objects")
struct LiveObjectsTests {
    @Test("a started, stopped and released loop counts up, then back down",
          arguments: [ExecutorKind.sharedPool, .dedicatedThread])
    func loopLifecycleCounts(executor: ExecutorKind) async throws {
        let before = SpindleLiveObjects.current
        do {
            let loop = Spinner.initialState(0)
                .feedback(Feedback<Int, Int>(effect: { (_: Int) -> Int? in nil }))
                .reducer(Reducer { state, event in state + event })
                .start(options: SpinOptions(executor: executor == .dedicatedThread ? .dedicatedThread : .sharedPool))
            let running = SpindleLiveObjects.current
            #expect(running.loops >= before.loops + 1)
            #expect(running.feedbackWorkers >= before.feedbackWorkers + 1)
            #expect(running.eventQueues >= before.eventQueues + 1)
            // A dedicated thread is counted; the shared pool's threads live
            // as long as the process and are not.
            if executor == .dedicatedThread {
                #expect(running.reducerThreads >= before.reducerThreads + 1)
            }
            _ = loop.emit(1)
            await loop.stop()
        }
        // Other suites may run loops in parallel: wait for ours to go.
        #expect(await eventually(within: 10) {
            let now = SpindleLiveObjects.current
            return now.loops <= before.loops && now.reducerThreads <= before.reducerThreads
        }, "live objects \(SpindleLiveObjects.current), before \(before)")
    }
}
}
