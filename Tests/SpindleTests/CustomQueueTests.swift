@_spi(Benchmarks) import Spindle
import Testing
import SpindleQueueFixture
import SpindleTestSupport

// A queue made outside the engine (`QueueKind.custom`, SPI): the benchmark
// harness's yardstick plugs in with a factory typed for its events, tests
// with one for any event type (`.locked`, in every contract matrix).
@Suite struct CustomQueueTests {
    @Test("a typed custom queue carries every event, each producer's in order, single and batched",
          arguments: allExecutors)
    func typedCustomQueueKeepsTheContract(_ kind: ExecutorKind) async throws {
        let producers = 2
        let perProducer = 5_000
        // The state checks each producer's order as it goes: the next
        // sequence number expected of each, and how many came out of order.
        struct Cursors: Sendable {
            var next = [0, 0]
            var outOfOrder = 0
            var reduced = 0
        }
        let spin = Spin<Cursors, Int>(initialState: Cursors()) {
            Reducer<Cursors, Int> { state, event in
                var state = state
                let (producer, sequence) = (event / 1_000_000, event % 1_000_000)
                if state.next[producer] != sequence { state.outOfOrder += 1 }
                state.next[producer] = sequence + 1
                state.reduced += 1
                return state
            }
        }
        try await kind.withExecutor { executor in
            let loop = try spin.start(options: SpinOptions(executor: executor, queue: .locked(for: Int.self)))
            await withTaskGroup(of: Void.self) { group in
                for producer in 0..<producers {
                    group.addTask {
                        await onThread {
                            let base = producer * 1_000_000
                            // Half one by one, half in batches of 100.
                            for sequence in 0..<perProducer / 2 { _ = loop.emit(base + sequence) }
                            var sequence = perProducer / 2
                            while sequence < perProducer {
                                let batch = (sequence..<min(sequence + 100, perProducer)).map { base + $0 }
                                _ = loop.emit(contentsOf: batch)
                                sequence += batch.count
                            }
                        }
                    }
                }
            }
            let report = await loop.stop()
            #expect(report.reduced == producers * perProducer)
            #expect(loop.state.reduced == producers * perProducer)
            #expect(loop.state.outOfOrder == 0)
            #expect(loop.state.next == [perProducer, perProducer])
        }
    }
}
