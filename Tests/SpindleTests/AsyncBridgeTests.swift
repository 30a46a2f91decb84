import Foundation
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport

// The async/await bridge: stream-form feedbacks, `spin.stream()` and
// `spin.run()`. A gear's `attachedCount` tells whether a loop runs: a
// gear → loop feedback is attached at start and detached by the stop.

/// Counts up by one per event while below `limit`; its gear feedback is
/// attached while the loop runs.
private func countingSpin(gear: Gear<Int>, limit: Int = 1_000_000) -> Spin<Int, Int> {
    Spin<Int, Int>(initialState: 0) {
        Feedback(attachedTo: gear, fromGear: { (value: Int) -> Int? in value })
        Reducer { state, event in min(state + event, limit) }
    }
}

@Suite struct StreamFeedbackTests {
    @Test(arguments: allQueueKinds)
    func streamFeedbackSeesEveryStateInOrderAndItsEventsAreReduced(queue: QueueKind) async throws {
        let seen = Recorder<Int>()
        let spin = Spin<Int, Int>(initialState: 0) {
            Feedback<Int, Int>(streamEffect: { states in
                states.compactMap { state -> Int? in
                    seen.append(state)
                    return state < 50 ? 1 : nil
                }
            })
            Reducer { state, event in state + event }
        }
        let loop = try spin.start(options: SpinOptions(queue: queue))
        #expect(await eventually { seen.count == 51 })
        #expect(seen.values == Array(0...50))
        #expect(await eventually { loop.state == 50 })  // `state` is published after the batch: it may lag what the feedback saw
        #expect(loop.statistics.effectRunsStarted == 1)
        await loop.stop()
    }

    @Test func stopFinishesTheStreamAndCancelsTheRunWithNothingLeftLive() async throws {
        let probes = ReleaseProbes()
        let ended = Recorder<String>()
        do {
            let (feedback, reducer) = (probes.probe(), probes.probe())
            let spin = Spin<Int, Int>(initialState: 0) {
                Feedback<Int, Int>(streamEffect: { states in
                    _ = feedback
                    return AsyncStream<Int> { continuation in
                        let task = Task {
                            for await state in states where state == 3 { continuation.yield(10) }
                            ended.append("states ended")
                            continuation.finish()
                        }
                        continuation.onTermination = { _ in task.cancel() }
                    }
                })
                Reducer { state, event in
                    _ = reducer
                    return state + event
                }
            }
            let loop = try spin.start()
            loop.emit(1)
            loop.emit(2)
            #expect(await eventually { loop.state == 13 })
            #expect(ended.values.isEmpty)
            await loop.stop()
            #expect(await eventually { ended.values == ["states ended"] })
            #expect(loop.statistics.effectRunsCancelled == 1)
        }
        // The run's task has ended (above), and the released loop lets go
        // of its feedback and reducer: this loop's own objects, not the
        // process-wide counts, which other tests' loops move meanwhile.
        #expect(await eventually { probes.live == 0 }, "\(probes.live) of the loop's closures still held")
    }

    @Test func aThrowingSequenceIsReportedAndTheLoopKeepsRunning() async throws {
        struct Failure: Error {}
        let errors = Recorder<Int>()
        let spin = Spin<Int, Int>(initialState: 0) {
            Feedback<Int, Int>(effect: { (_: Int) -> Int? in nil })
            Feedback<Int, Int>(streamEffect: { states in
                states.map { state -> Int in
                    if state == 1 { throw Failure() }
                    return 0
                }
            })
            Reducer { state, event in state + event }
        }
        let loop = try spin.start(options: SpinOptions(onEffectError: { errors.append($0.feedbackIndex) }))
        loop.emit(1)
        #expect(await eventually { errors.values == [1] })
        loop.emit(5)
        #expect(await eventually { loop.state == 6 })
        await loop.stop()
    }
}

/// A stream that never yields would hang the run: a time limit turns that
/// into a failure. A hang guard, not a margin: under Thread Sanitizer, with
/// the whole package in parallel beside two CPU hogs, a test here has taken
/// 82 s (and one failed on a 1-minute limit, cancelled mid-iteration).
@Suite(.timeLimit(.minutes(10)))
struct SpinStreamTests {
    @Test func nothingStartsUntilTheFirstIterationAndBreakStopsTheLoop() async {
        let probes = ReleaseProbes()
        let gear = Gear<Int>()
        // Every loop this spin starts reduces its first event here.
        let loopsStarted = Counter()
        do {
            let reducer = probes.probe()
            let spin = Spin<Int, Int>(initialState: 0) {
                Feedback(attachedTo: gear, fromGear: { (value: Int) -> Int? in value })
                Reducer { state, event in
                    _ = reducer
                    if state == 0 { loopsStarted.add() }
                    return state + event
                }
            }
            // `stream()` is synchronous and launches nothing: a loop it
            // started would be attached here already, or would show as a
            // second loop reducing events below.
            let states = spin.stream()
            #expect(gear.attachedCount == 0)
            var seen: [Int] = []
            for await state in states {
                seen.append(state)
                if state == 0 {
                    #expect(gear.attachedCount == 1)
                    gear.propagate(1)
                    gear.propagate(2)
                }
                if state >= 3 { break }
            }
            #expect(seen == [0, 1, 3])
        }
        // The iterator is gone: its loop stops in the background and lets
        // go of its reducer (with the spin, released here too).
        #expect(await eventually { gear.attachedCount == 0 })
        #expect(await eventually { probes.live == 0 }, "the loop still holds its reducer")
        #expect(loopsStarted.current == 1)
    }

    /// A loop that moves on at once (its feedback counts up from the initial
    /// state): the stream still begins with the initial state and misses
    /// none of the states that follow.
    @Test func theStreamBeginsWithTheInitialStateOfALoopThatMovesAtOnce() async {
        let spin = Spin(initialState: 0) {
            Feedback<Int, Int>(effect: { (count: Int) -> Int? in count < 2_000 ? 1 : nil })
                .executeOnReducerThread()
            Reducer<Int, Int> { count, step in count + step }
        }
        for _ in 0..<10 {
            var seen: [Int] = []
            for await state in spin.stream() {
                seen.append(state)
                if state >= 2_000 { break }
            }
            #expect(seen.first == 0)
            #expect(seen == Array(0...2_000))
        }
    }

    @Test func cancellingTheTaskStopsTheLoopBeforeTheIterationEnds() async {
        let gear = Gear<Int>()
        let spin = countingSpin(gear: gear)
        let firstState = Recorder<Int>()
        let task = Task { () -> (states: [Int], attachedAtEnd: Int) in
            var states: [Int] = []
            for await state in spin.stream() {
                states.append(state)
                firstState.append(state)
            }
            return (states, gear.attachedCount)
        }
        #expect(await eventually { firstState.count == 1 && gear.attachedCount == 1 })
        task.cancel()
        let result = await task.value
        #expect(result.states == [0])
        #expect(result.attachedAtEnd == 0)
    }

    @Test func eachIterationRunsItsOwnLoop() async {
        let gear = Gear<Int>()
        let spin = countingSpin(gear: gear)
        var first = spin.stream().makeAsyncIterator()
        var second = spin.stream().makeAsyncIterator()
        #expect(await first.next() == 0)
        #expect(await second.next() == 0)
        #expect(gear.attachedCount == 2)
        gear.propagate(4)
        #expect(await first.next() == 4)
        #expect(await second.next() == 4)
    }
}

@Suite struct SpinRunTests {
    @Test func runKeepsTheLoopUntilCancelledThenDrainsStopsAndThrows() async {
        let gear = Gear<Int>()
        let spin = countingSpin(gear: gear)
        let started = Locked<SpinLoop<Int, Int>?>(nil)
        let task = Task {
            try await spin.run(onStart: { loop in
                for _ in 0..<1000 { loop.emit(1) }
                started.withLock { $0 = loop }
            })
        }
        #expect(await eventually { started.withLock { $0 } != nil && gear.attachedCount == 1 })
        let loop = started.withLock { $0 }!
        // Still running after onStart returned: it reduces a later event.
        gear.propagate(1)
        #expect(await eventually { loop.state == 1001 })
        #expect(!loop.isStopped)
        for _ in 0..<1000 { loop.emit(1) }
        task.cancel()
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(loop.isStopped)
        #expect(gear.attachedCount == 0)
        #expect(loop.state == 2001)  // drained: every accepted event reduced
    }

    @Test func runInACancelledTaskStopsAndThrowsAtOnce() async {
        let gear = Gear<Int>()
        let spin = countingSpin(gear: gear)
        let started = Locked<SpinLoop<Int, Int>?>(nil)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await spin.run(onStart: { loop in started.withLock { $0 = loop } })
        }
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(started.withLock { $0 }?.isStopped == true)
        #expect(gear.attachedCount == 0)
    }
}
