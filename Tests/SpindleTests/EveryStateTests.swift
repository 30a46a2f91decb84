import Dispatch
import Spindle
import Testing
import SpindleTestSupport

enum CounterEvent: Sendable, Equatable {
    case increment
}

let counterReducer = Reducer<Int, CounterEvent> { state, _ in state + 1 }

@Suite struct EveryStateTests {
    @Test(arguments: allExecutors, allQueueKinds)
    func aFeedbackSeesTheInitialStateThenEveryStateInOrder(executor: ExecutorKind, queue: QueueKind) async throws {
        try await executor.withExecutor { executor in
            let seen = Recorder<Int>()
            let queued = Recorder<Int>()
            let loop = try Spin(initialState: 0) {
                // On the loop's executor, after each reduction.
                Feedback<Int, CounterEvent>(effect: { state in
                    seen.append(state)
                    return nil
                })
                // On a queue of its own, in batches.
                Feedback<Int, CounterEvent>(effect: { state in
                    queued.append(state)
                    return nil
                }, on: DispatchQueue(label: "every-state.feedback"))
                Reducer(counterReducer.reduce)
            }.start(options: SpinOptions(executor: executor, queue: queue))
            // On a thread of its own: on a full `.block` queue the emit
            // waits, and a cooperative thread must never wait (the pool has
            // one per core, and the suite's other tests need them).
            await onThread { for _ in 0..<5_000 { loop.emit(.increment) } }
            #expect(await eventually { seen.count == 5_001 && queued.count == 5_001 })
            await loop.stop()
            #expect(seen.values == Array(0...5_000))
            #expect(queued.values == Array(0...5_000))
        }
    }

    @Test(arguments: allExecutors)
    func aCounterWhoseFeedbackEmitsConvergesThroughEveryState(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let seen = Recorder<Int>()
            let loop = try Spin(initialState: 0) {
                Feedback<Int, CounterEvent>(effect: { state in
                    seen.append(state)
                    return state < 1_000 ? .increment : nil
                })
                Reducer(counterReducer.reduce)
            }.start(options: SpinOptions(executor: executor))
            #expect(await eventually { loop.state == 1_000 && seen.count == 1_001 })
            await loop.stop()
            #expect(seen.values == Array(0...1_000))
        }
    }

    @Test(arguments: allExecutors)
    func statesStreamYieldsTheCurrentStateFirstThenEveryNewOne(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let loop = try Spin(initialState: 0, feedbacks: [], reducer: counterReducer)
                .start(options: SpinOptions(executor: executor))
            for _ in 0..<10 { loop.emit(.increment) }
            #expect(await eventually { loop.state == 10 })
            let stream = loop.states(bufferingPolicy: .unbounded)  // every state is checked
            let collector = Task {
                var values: [Int] = []
                for await value in stream { values.append(value) }
                return values
            }
            for _ in 0..<500 { loop.emit(.increment) }
            #expect(await eventually { loop.state == 510 })
            await loop.stop()
            // The stream ends at stop, after the final state.
            let values = await collector.value
            #expect(values == Array(10...510))
        }
    }

    @Test func aStoppedLoopsStatesStreamYieldsTheFinalStateAndEnds() async throws {
        let loop = try Spin(initialState: 7, feedbacks: [], reducer: counterReducer).start()
        loop.emit(.increment)
        await loop.stop()
        var values: [Int] = []
        for await value in loop.states(bufferingPolicy: .unbounded) { values.append(value) }
        #expect(values == [8])
    }

    @Test(arguments: allExecutors)
    func inlineFeedbackRunsOnTheReducerThreadAndSeesEveryState(executor: ExecutorKind) async throws {
        try await executor.withExecutor { executor in
            let seen = Recorder<Int>()
            let loop = try Spin(initialState: 0) {
                Feedback<Int, CounterEvent>(effect: { state in
                    seen.append(state)
                    return state < 2_000 ? .increment : nil
                }).executeOnReducerThread()
                Reducer(counterReducer.reduce)
            }.start(options: SpinOptions(executor: executor))
            // No window of its own: under TSan, beside two CPU hogs, with
            // every suite running at once on two cores, this loop's share of
            // the shared pool once took over 60 s (the hang guard bounds it).
            #expect(await eventually { loop.state == 2_000 })
            await loop.stop()
            #expect(seen.values == Array(0...2_000))
        }
    }

    @Test func aQueueExecutorIsTheDefaultQueueOfFeedbacks() async throws {
        let queue = DispatchQueue(label: "test.spin-queue")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 42)
        let onQueue = Recorder<Bool>()
        let loop = try Spin(initialState: 0) {
            Feedback<Int, CounterEvent>(effect: { _ in
                onQueue.append(DispatchQueue.getSpecific(key: key) == 42)
                return nil
            })
            Reducer(counterReducer.reduce)
        }.start(options: SpinOptions(executor: .queue(queue)))
        loop.emit(.increment)
        #expect(await eventually { onQueue.count == 2 })
        await loop.stop()
        #expect(onQueue.values.allSatisfy { $0 })
    }

    @Test func aFeedbacksExecuteOnOverridesTheLoopsQueue() async throws {
        let spinQueue = DispatchQueue(label: "test.spin")
        let feedbackQueue = DispatchQueue(label: "test.feedback")
        let key = DispatchSpecificKey<String>()
        feedbackQueue.setSpecific(key: key, value: "feedback")
        let labels = Recorder<String?>()
        let loop = try Spin(initialState: 0) {
            Feedback<Int, CounterEvent>(effect: { _ in
                labels.append(DispatchQueue.getSpecific(key: key))
                return nil
            }).execute(on: feedbackQueue)
            Reducer(counterReducer.reduce)
        }.start(options: SpinOptions(executor: .queue(spinQueue)))
        #expect(await eventually { labels.count == 1 })
        await loop.stop()
        #expect(labels.values == ["feedback"])
    }
}
