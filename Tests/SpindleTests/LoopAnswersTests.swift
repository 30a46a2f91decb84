@_spi(Tuning) import Spindle
import SpindleTestSupport
import Testing

// What a loop answers: its options' defaults, emit's answer for each fate
// of an event, a batch emit's counts, and a discarding stop's report. (The
// RunningALoop snippet shows these calls.)
@Suite struct LoopAnswersTests {
    @Test func spinOptionsHaveTheDocumentedDefaults() async throws {
        let defaults = SpinOptions()
        #expect(defaults.executor == nil)  // the shared pool
        #expect(defaults.queue == .lockFree)
        #expect(defaults.onEffectError == nil)
        #expect(defaults.logger.label == "spindle")
        #expect(defaults.maxBatch == 1024)
        #expect(defaults.spinsBeforeParking == 2000)

        var options = SpinOptions()
        options.queue = .bounded(capacity: 4096, overflow: .dropNewest)
        options.maxBatch = 256
        #expect(options.queue == .bounded(capacity: 4096, overflow: .dropNewest))
        #expect(options.maxBatch == 256)
        let loop = try Spin(initialState: Levels(left: 0, right: 10)) {
            Feedback(effect: leftEffect)
            Feedback(effect: rightEffect)
            levelsReducer
        }.start(options: options)
        // The levels settle at (10, 0): ten states with left < right, each
        // making both feedbacks emit.
        #expect(await eventually { loop.state == Levels(left: 10, right: 0) })
        await loop.stop()
        #expect(loop.state == Levels(left: 10, right: 0))
        #expect(loop.statistics.droppedEvents == 0)
    }

    @Test func emitAnswersAcceptedDroppedOrStopped() async throws {
        // A reducer that blocks on the first event, so a two-slot
        // .dropNewest queue can be filled (a real reducer is pure). It
        // blocks a thread of its own, not the shared pool every test uses.
        let latch = Latch()
        let loop = try Spin(initialState: Levels(left: 0, right: 10), feedbacks: [], reducer: Reducer<Levels, LevelsEvent> { state, event in
            if state.left == 0 { latch.block() }
            return levelsReducer.reduce(state, event)
        }).start(options: SpinOptions(executor: .dedicatedThread, queue: .bounded(capacity: 2, overflow: .dropNewest)))

        var answers: [EmitResult] = []
        func emit() { answers.append(loop.emit(.increaseLeft)) }

        emit()
        #expect(await eventually { latch.isBlocked })
        emit()
        emit()
        emit()
        latch.release()
        let report = await loop.stop()
        emit()

        #expect(answers == [.accepted, .accepted, .accepted, .dropped, .stopped])
        #expect(report == StopReport(reduced: 3, discarded: 0))
        #expect(loop.state == Levels(left: 3, right: 10))
        #expect(loop.statistics.droppedEvents == 1)
        #expect(loop.statistics.rejectedAfterStop == 1)
    }

    @Test func aBatchEmitAnswersWithItsCounts() async throws {
        let loop = try Spin(initialState: Levels(left: 0, right: 10), feedbacks: [], reducer: levelsReducer).start()
        let result = loop.emit(contentsOf: [.increaseLeft, .decreaseRight, .increaseLeft])
        #expect(result == EmitBatchResult(accepted: 3, dropped: 0, stopped: 0))
        await loop.stop()
        #expect(loop.state == Levels(left: 2, right: 9))
    }

    @Test func aDiscardingStopAccountsForEveryAcceptedEvent() async throws {
        let loop = try Spinner
            .initialState(Levels(left: 0, right: 10))
            .reducer(levelsReducer)
            .start()
        var accepted = 0
        for _ in 0..<10_000 where loop.emit(.increaseLeft) == .accepted { accepted += 1 }
        #expect(accepted == 10_000)

        let report = await loop.stop(.discardPending)

        // Nothing lost, nothing invented: every accepted event is in one count.
        #expect(report.reduced + report.discarded == accepted)
        #expect(loop.state.left == report.reduced)
        #expect(loop.isStopped)
        let statistics = loop.statistics
        #expect(statistics.reducedEvents == report.reduced)
        #expect(statistics.discardedAtStop == report.discarded)
        // Stopping again waits for the same stop and returns the same report.
        #expect(await loop.stop() == report)
    }
}
