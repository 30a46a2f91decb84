import Spindle
import Testing
import SpindleTestSupport

/// Per-producer order and conservation, checked inside the reducer.
struct OrderState: Sendable {
    var lastSequence: [Int]
    var reduced = 0
    var outOfOrder = 0

    init(producers: Int) { lastSequence = Array(repeating: -1, count: producers) }
}

struct Stamped: Sendable {
    let producer: Int
    let sequence: Int
}

let orderReducer = Reducer<OrderState, Stamped> { state, event in
    var state = state
    if event.sequence != state.lastSequence[event.producer] + 1 { state.outOfOrder += 1 }
    state.lastSequence[event.producer] = event.sequence
    state.reduced += 1
    return state
}

@Suite struct ConcurrentProducerTests {
    @Test(arguments: allExecutors, allQueueKinds)
    func everyAcceptedEventIsReducedOnceInProducerOrder(executor: ExecutorKind, queue: QueueKind) async throws {
        try await executor.withExecutor { executor in
            for producers in [1, 2, 4, 8] {
                try await expectEveryEventReducedInOrder(producers: producers, executor: executor, queue: queue)
            }
        }
    }

    private func expectEveryEventReducedInOrder(producers: Int, executor: SpinExecutor, queue: QueueKind) async throws {
        let perProducer = 10_000
        let loop = try Spin(initialState: OrderState(producers: producers), feedbacks: [], reducer: orderReducer)
            .start(options: SpinOptions(executor: executor, queue: queue))
        let accepted = Recorder<Int>()
        let finished = await onThreads(producers) { producer in
            var count = 0
            for sequence in 0..<perProducer where loop.emit(Stamped(producer: producer, sequence: sequence)) == .accepted {
                count += 1
            }
            accepted.append(count)
        }
        try #require(finished, "\(producers) producers did not finish")
        let report = await loop.stop()
        let acceptedTotal = accepted.values.reduce(0, +)
        #expect(acceptedTotal == producers * perProducer, "\(producers) producers")
        #expect(loop.state.reduced == acceptedTotal, "\(producers) producers")
        #expect(report.reduced == acceptedTotal, "\(producers) producers")
        #expect(report.discarded == 0, "\(producers) producers")
        #expect(loop.state.outOfOrder == 0, "\(producers) producers")
        #expect(loop.state.lastSequence == Array(repeating: perProducer - 1, count: producers), "\(producers) producers")
    }

    @Test(arguments: allExecutors, allQueueKinds)
    func producersRacingStopGetAcceptedOrStoppedAndNothingAcceptedIsLost(executor: ExecutorKind, queue: QueueKind) async throws {
        try await executor.withExecutor { executor in
            let producers = 4
            let loop = try Spin(initialState: OrderState(producers: producers), feedbacks: [], reducer: orderReducer)
                .start(options: SpinOptions(executor: executor, queue: queue))
            let accepted = Recorder<Int>()
            let other = Recorder<EmitResult>()
            // Stop once reduction is under way, so it lands mid-stream.
            async let stopping: StopReport = {
                _ = await eventually { loop.statistics.reducedEvents > 1_000 }
                return await loop.stop()
            }()
            await onThreads(producers) { producer in
                var count = 0
                var sequence = 0
                while sequence < 50_000 {
                    let result = loop.emit(Stamped(producer: producer, sequence: sequence))
                    if result == .accepted {
                        count += 1
                        sequence += 1
                    } else {
                        other.append(result)
                        break
                    }
                }
                accepted.append(count)
            }
            let report = await stopping
            let acceptedTotal = accepted.values.reduce(0, +)
            #expect(other.values.allSatisfy { $0 == .stopped })
            #expect(report.reduced == acceptedTotal)
            #expect(loop.state.reduced == acceptedTotal)
            #expect(loop.state.outOfOrder == 0)
        }
    }
}
