@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport

extension StressSuite {
@Suite("Live objects")
struct LiveObjectsTests {
    @Test("a started, stopped and released loop counts up, then back down",
          arguments: [ExecutorKind.sharedPool, .dedicatedThread])
    func loopLifecycleCounts(executor: ExecutorKind) async throws {
        // The counts are process-wide, so they are compared with a quiet
        // process (every count zero), not with a snapshot: another suite's
        // objects can only add to zero, while a snapshot that held some of
        // theirs could drop below this loop's share as they end.
        let quiet = await eventually { SpindleLiveObjects.current.isEmpty }
        try #require(quiet, "live objects before the test (a leak of an earlier test?): \(SpindleLiveObjects.current)")
        do {
            let loop = try Spinner.initialState(0)
                .feedback(Feedback<Int, Int>(effect: { (_: Int) -> Int? in nil }))
                .reducer(Reducer { state, event in state + event })
                .start(options: SpinOptions(executor: executor == .dedicatedThread ? .dedicatedThread : .sharedPool))
            let running = SpindleLiveObjects.current
            #expect(running.loops >= 1)
            #expect(running.feedbackWorkers >= 1)
            #expect(running.eventQueues >= 1)
            // A dedicated thread is counted; the shared pool's threads live
            // as long as the process and are not.
            if executor == .dedicatedThread {
                #expect(running.reducerThreads >= 1)
            }
            _ = loop.emit(1)
            await loop.stop()
        }
        // Back to zero: this loop's objects are gone (other suites' loops,
        // if any run beside this test, can only delay it).
        #expect(await eventually {
            let now = SpindleLiveObjects.current
            return now.loops == 0 && now.reducerThreads == 0 && now.feedbackWorkers == 0 && now.eventQueues == 0
        }, "live objects \(SpindleLiveObjects.current)")
    }
}
}
