import Foundation
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) @testable import Spindle
import Testing
import SpindleTestSupport

extension StressSuite {
    /// `SpinLoop.states` under load: producer threads flood a loop while
    /// tasks subscribe and leave (by cancelling a waiting `next()`, or by
    /// dropping the sequence) and two subscribers read to the end, some
    /// `next()` calls finding their state while watching and some after
    /// suspending. Checked: every accepted event reduced, in each
    /// producer's order; each subscriber's states run without a gap or a
    /// repeat (the state counts reductions), the full readers' up to the
    /// final state; two conflating readers (`.latest`, `.bufferingNewest(4)`)
    /// see increasing states, never more waiting than their limit, and end
    /// on the final state; every subscription freed and forgotten by the
    /// loop.
    @Suite("State streams under Thread Sanitizer")
    struct StateStreamStressTests {
        @Test("subscribers come and go under load; every state reaches each, in order, once",
              .timeLimit(.minutes(5)), arguments: [QueueKind.lockFree, .bounded(capacity: 1024, overflow: .block)])
        func subscribersComeAndGoUnderLoad(queue: QueueKind) async throws {
            let baseline = await LiveBaseline.settle()
            // In a block: the loop must be released before the live-object check.
            do {
                let producers = 4
                let perProducer = max(2_000, StressScale.rounds * 1_000)
                let checker = OrderChecker(producers: producers)
                let loop = try Spin(initialState: 0, feedbacks: [], reducer: checker.reducer)
                    .start(options: SpinOptions(queue: queue))

                // Two full readers, subscribed before any event.
                let readers = (0..<2).map { _ in
                    let stream = loop.states(bufferingPolicy: .unbounded)  // every state is checked
                    return Task { () -> (gaps: Int, first: Int?, last: Int?) in
                        var gaps = 0
                        var first: Int?
                        var last: Int?
                        for await state in stream {
                            if let last, state != last + 1 { gaps += 1 }
                            if first == nil { first = state }
                            last = state
                        }
                        return (gaps, first, last)
                    }
                }
                // Two conflating readers (`.latest`, `.bufferingNewest(4)`),
                // slowed by a yield per state so that they lag: states
                // strictly increasing, never more waiting than the limit,
                // the last one the final state.
                let conflating = [SpinStates<Int>.BufferingPolicy.latest, .bufferingNewest(4)].map { policy in
                    let stream = loop.states(bufferingPolicy: policy)
                    return Task { () -> (disorder: Int, mostWaiting: Int, last: Int?) in
                        var disorder = 0
                        var mostWaiting = 0
                        var last: Int?
                        for await state in stream {
                            if let last, state <= last { disorder += 1 }
                            last = state
                            mostWaiting = max(mostWaiting, stream.bufferedCount)
                            await Task.yield()
                        }
                        return (disorder, mostWaiting, last)
                    }
                }
                // Churning subscribers: read a few states, then leave.
                let churnGaps = Counter()
                let churned = Counter()
                let producersDone = Flag()
                let churners = (0..<3).map { index in
                    Task {
                        var random = SplitMix64(seed: UInt64(index + 1))
                        repeat {
                            let stream = loop.states(bufferingPolicy: .unbounded)  // every state is checked
                            let reads = Int(random.next() % 50) + 1
                            if random.next() % 2 == 0 {
                                // Leave by dropping the sequence.
                                var iterator = stream.makeAsyncIterator()
                                var last = await iterator.next()
                                for _ in 0..<reads {
                                    guard let state = await iterator.next() else { break }
                                    if let previous = last, state != previous + 1 { churnGaps.add() }
                                    last = state
                                }
                            } else {
                                // Leave by cancelling a waiting next().
                                let reader = Task { () -> Int in
                                    var gaps = 0
                                    var last: Int?
                                    for await state in stream {
                                        if let previous = last, state != previous + 1 { gaps += 1 }
                                        last = state
                                    }
                                    return gaps
                                }
                                await Task.yield()
                                reader.cancel()
                                churnGaps.add(await reader.value)
                            }
                            churned.add()
                        } while !producersDone.isRaised
                    }
                }

                let tallies = Locked<[ProducerTally]>([])
                // Producers give way now and then (every 500 events, until
                // one more churn round has ended or for a while), so that the
                // subscribers' tasks run while events still come.
                let produced = await onThreads(producers) { producer in
                    var tally = ProducerTally(producer: producer)
                    for sequence in 0..<perProducer {
                        tally.count(loop.emit(Stamped(producer: producer, sequence: sequence)), sequence: sequence)
                        if sequence % 500 == 499 {
                            let round = sequence / 500
                            var yields = 0
                            while churned.current <= round, yields < 2_000 {
                                sched_yield()
                                yields += 1
                            }
                        }
                    }
                    tallies.withLock { $0.append(tally) }
                }
                #expect(produced, "producers did not finish")
                // A churner may be waiting for a state that no longer comes:
                // cancelling ends that wait.
                producersDone.raise()
                for churner in churners { churner.cancel() }
                for churner in churners { await churner.value }
                let report = await loop.stop()

                let total = tallies.withLock { $0.map(\.accepted).reduce(0, +) }
                #expect(total == producers * perProducer)
                let refused: Int = tallies.withLock { tallies in tallies.reduce(0) { $0 + $1.stopped + $1.dropped } }
                #expect(refused == 0)
                #expect(report.reduced == total)
                #expect(checker.reduced == total)
                #expect(checker.outOfOrder == 0 && checker.gaps == 0,
                        "\(checker.outOfOrder) out of order, \(checker.gaps) gaps")
                for reader in readers {
                    let (gaps, first, last) = await reader.value
                    #expect(gaps == 0, "a full reader skipped or repeated states \(gaps) times")
                    #expect(first == 0 && last == total, "a full reader saw \(String(describing: first))…\(String(describing: last))")
                }
                for (reader, limit) in zip(conflating, [1, 4]) {
                    let (disorder, mostWaiting, last) = await reader.value
                    #expect(disorder == 0, "a conflating reader saw \(disorder) states out of order")
                    #expect(mostWaiting <= limit, "a conflating reader had \(mostWaiting) states waiting, limit \(limit)")
                    #expect(last == total, "a conflating reader ended on \(String(describing: last)), not the final state")
                }
                #expect(churnGaps.current == 0, "churning subscribers skipped or repeated states")
                #expect(churned.current >= churners.count)
                #expect(loop.stateSubscriberCount == 0)
                reportTotal("state-stream-subscriptions", queue: name(of: queue), churned.current + readers.count + conflating.count)
            }
            await baseline.expectReturned()
        }
    }
}
