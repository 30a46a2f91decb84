#if SpindleMetrics
import Dispatch
import MetricsTestKit
import Spindle
import SpindleMetrics
import Testing
import SpindleTestSupport

@Suite("MetricsObserver (swift-metrics)")
struct MetricsObserverTests {
    @Test("counters, queue depth gauge, reduction timer and batch sizes")
    func reportsMetrics() async throws {
        let metrics = TestMetrics()
        let observer = MetricsObserver<Int, Int>(dimensions: [("loop", "test")], factory: metrics)
        let spin = Spin<Int, Int>(initialState: 0) {
            Feedback<Int, Int>(effect: { (state: Int) async throws -> Int? in
                if state == 3 { throw Boom() }
                return nil
            })
            Reducer { state, event in state + event }
        }
        let loop = try spin.observed(by: observer).start(options: SpinOptions(onEffectError: { _ in }))
        for _ in 0..<3 { loop.emit(1) }
        let dims = [("loop", "test")]
        #expect(await eventually {
            (try? metrics.expectCounter("spindle_effects_failed", dims).totalValue) == 1
        })
        await loop.stop()
        #expect(loop.emit(1) == .stopped)

        #expect(try metrics.expectCounter("spindle_events_reduced", dims).totalValue == 3)
        #expect(try metrics.expectCounter("spindle_events_rejected", dims).totalValue == 1)
        let started = try metrics.expectCounter("spindle_effects_started", dims).totalValue
        #expect(started >= 2 && started <= 4)  // states 0...3, some conflated into one batch
        #expect(try metrics.expectGauge("spindle_queue_depth", dims).lastValue == 0)
        let timer = try metrics.expectTimer("spindle_reduction_duration", dims)
        #expect(!timer.values.isEmpty)
        #expect(timer.values.allSatisfy { $0 >= 0 })
        let sizes = try metrics.expectRecorder("spindle_batch_size", dims)
        #expect(sizes.values.reduce(0, +) == 3)
    }

    @Test("drops and discards are counted with their reason")
    func dropsAndDiscards() async throws {
        let metrics = TestMetrics()
        let gate = DispatchSemaphore(value: 0)
        let holding = OpenOnce()
        let spin = Spin<Int, Int>(initialState: 0) {
            Reducer { state, event in
                if event == 0 {
                    holding.open()
                    gate.wait()
                }
                return state + 1
            }
        }
        // The reducer blocks: on a thread of its own, not the shared pool.
        let loop = try spin.observed(by: MetricsObserver(factory: metrics))
            .start(options: SpinOptions(
                executor: .dedicatedThread, queue: .bounded(capacity: 4, overflow: .dropNewest), maxBatch: 1))
        loop.emit(0)
        await holding.wait()  // the ring is empty again
        var dropped = 0
        for event in 1...20 where loop.emit(event) == .dropped { dropped += 1 }
        // The stop is requested while the reducer still holds event 0, and
        // only then is the reducer let go: every accepted event is pending
        // at the stop, whatever the scheduling.
        loop.requestStop(.discardPending)
        gate.signal()
        let report = await loop.stop(.discardPending)
        #expect(report == StopReport(reduced: 1, discarded: 20 - dropped))
        #expect(dropped > 0)
        #expect(try metrics.expectCounter("spindle_events_dropped").totalValue == Int64(dropped))
        let discarded = metrics.counterTotal(label: "spindle_events_discarded", dimensions: [("reason", "stop")])
        #expect(discarded == Int64(report.discarded))
    }
}
#endif
