import CSpindle
import Foundation
import Synchronization
import SpindleTestSupport
import Testing

/// Acquires a node, writes `value` into its payload and enqueues it.
private func enqueue(_ queue: OpaquePointer, _ value: Int) throws {
    let payload = try #require(spindle_wfq_acquire(queue))
    payload.storeBytes(of: value, as: Int.self)
    spindle_wfq_enqueue(queue, payload)
}

/// Reads the consumer's batch until `next` returns NULL (which hands the
/// batch's nodes back to the pool). Stops after `limit` events, so that a
/// corrupted (cyclic) list fails the test instead of hanging it.
private func readBatch(_ queue: OpaquePointer, limit: Int = 1_000_000) -> [Int] {
    var values: [Int] = []
    while values.count < limit, let payload = spindle_wfq_next_consumer(queue) {
        values.append(payload.load(as: Int.self))
    }
    return values
}

/// Splices and reads until the queue is empty (at most `limit` events).
/// A true splice followed by an empty batch is a bug (see
/// spliceCountsOnlyUnreadEvents); two in a row would loop forever.
private func drainAll(_ queue: OpaquePointer, limit: Int = 1_000_000,
                      sourceLocation: SourceLocation = #_sourceLocation) -> [Int] {
    var values: [Int] = []
    var emptyBatches = 0
    while values.count < limit, spindle_wfq_splice_consumer(queue) {
        let batch = readBatch(queue, limit: limit - values.count)
        emptyBatches = batch.isEmpty ? emptyBatches + 1 : 0
        if emptyBatches == 1 {
            Issue.record("splice keeps reporting a non-empty batch, next finds nothing",
                         sourceLocation: sourceLocation)
            break
        }
        values += batch
    }
    return values
}

/// The engine's drain (LockFreeQueue.drain): next first, splice when the
/// batch runs out, stop after `max` events, usually in the middle of a batch.
private func drain(_ queue: OpaquePointer, max: Int,
                   sourceLocation: SourceLocation = #_sourceLocation) -> [Int] {
    var values: [Int] = []
    var justSpliced = false
    while values.count < max {
        if let payload = spindle_wfq_next_consumer(queue) {
            values.append(payload.load(as: Int.self))
            justSpliced = false
        } else if justSpliced {
            Issue.record("splice reported a non-empty batch, next found nothing", sourceLocation: sourceLocation)
            break
        } else if spindle_wfq_splice_consumer(queue) {
            justSpliced = true
        } else {
            break
        }
    }
    return values
}

/// Live nodes back to zero: takes the whole pool and gives it back, which
/// must not grow it, so every node has to be on the free list.
/// The multi-producer stress tests' consumer: this (test) thread drains
/// `raw` while the producers run, then checks every event arrived exactly
/// once in its producer's order, the producers reported no failure, and
/// every node went back to the pool. Destroys the queue unless a producer
/// may still be inside it.
private func consumeAndCheck(
    _ raw: OpaquePointer, producers: Int, perProducer: Int, progress: StressProgress, threads: TestThreads
) throws {
    var check = ProducerStreamCheck(producers: producers, perProducer: perProducer)
    let deadline = ContinuousClock.now + hangGuard
    var timedOut = false
    var idle = ConsumerIdle()
    var iteration = 0
    while true {
        // Checked on every path: a broken queue may yield events forever.
        iteration += 1
        if iteration & 255 == 0, ContinuousClock.now > deadline || check.received > producers * perProducer {
            timedOut = true
            progress.abort.store(true, ordering: .relaxed)
            break
        }
        if let payload = spindle_wfq_next_consumer(raw) {
            check.record(payload.load(as: Int.self))
            continue
        }
        if spindle_wfq_splice_consumer(raw) { continue }
        if progress.finishedProducers.load(ordering: .acquiring) == producers {
            // Every enqueue happened before that load: one last splice.
            if spindle_wfq_splice_consumer(raw) { continue }
            break
        }
        idle.pause()
    }
    // After an abort a producer may be stuck inside a broken queue.
    let joined = threads.join(timeoutSeconds: timedOut ? 5 : Int(hangGuardSeconds))
    #expect(joined)
    #expect(!timedOut)
    #expect(progress.failures.load(ordering: .relaxed) == 0)
    check.expectEveryEventExactlyOnceInProducerOrder()
    guard joined else { return }  // leak: a producer may still use it
    defer { spindle_wfq_destroy(raw) }
    #expect(drainAll(raw).isEmpty)
    try expectEveryNodeBackInThePool(raw)
}

private func expectEveryNodeBackInThePool(_ queue: OpaquePointer,
                                          sourceLocation: SourceLocation = #_sourceLocation) throws {
    // Finished nodes reach the pool in chains, or on an explicit flush.
    spindle_wfq_flush_consumer(queue)
    let pool = spindle_wfq_allocated_nodes(queue)
    var held: [UnsafeMutableRawPointer] = []
    held.reserveCapacity(pool)
    for _ in 0..<pool { held.append(try #require(spindle_wfq_acquire(queue), sourceLocation: sourceLocation)) }
    #expect(spindle_wfq_allocated_nodes(queue) == pool, "some nodes never returned to the pool",
            sourceLocation: sourceLocation)
    for payload in held { spindle_wfq_release(queue, payload) }
}

/// Creates an Int-payload queue (8 bytes, 8-aligned).
private func makeIntQueue(nodesPerSlab: Int = 64) throws -> OpaquePointer {
    try #require(spindle_wfq_create(8, 8, nodesPerSlab))
}

extension CSpindleTarget {
    @Suite("spindle_wfq: pooled wait-free MPSC queue")
    struct WaitFreeQueueTests {
        // MARK: Single-threaded contract

        @Test func deliversEventsInEnqueueOrderThenNull() throws {
            let queue = try makeIntQueue()
            defer { spindle_wfq_destroy(queue) }
            for value in 0..<100 { try enqueue(queue, value * 7) }

            #expect(spindle_wfq_splice_consumer(queue))
            #expect(readBatch(queue) == (0..<100).map { $0 * 7 })
            #expect(spindle_wfq_next_consumer(queue) == nil, "stays NULL once exhausted")
            try expectEveryNodeBackInThePool(queue)
        }

        @Test func emptyQueueSplicesNothingAndReturnsNull() throws {
            let queue = try makeIntQueue()
            defer { spindle_wfq_destroy(queue) }
            #expect(spindle_wfq_is_empty_consumer(queue))
            #expect(!spindle_wfq_splice_consumer(queue))
            #expect(spindle_wfq_next_consumer(queue) == nil)
            #expect(spindle_wfq_allocated_nodes(queue) == 0, "no slab before the first acquire")
        }

        @Test func isEmptyBeforeEnqueueAndAfterTheBatchIsExhausted() throws {
            let queue = try makeIntQueue()
            defer { spindle_wfq_destroy(queue) }
            #expect(spindle_wfq_is_empty_consumer(queue))
            try enqueue(queue, 1)
            #expect(!spindle_wfq_is_empty_consumer(queue))
            try enqueue(queue, 2)
            #expect(drainAll(queue) == [1, 2])
            #expect(spindle_wfq_is_empty_consumer(queue))
        }

        /// `looks_empty` reads the tail alone: empty before the first
        /// enqueue, not after it, not while more come behind it, and empty
        /// again once a splice has taken everything into the consumer's
        /// batch (which it does not count), and after each later splice.
        @Test func looksEmptyFollowsTheSharedQueueNotTheBatch() throws {
            let queue = try makeIntQueue()
            defer { spindle_wfq_destroy(queue) }
            #expect(spindle_wfq_looks_empty(queue))
            try enqueue(queue, 1)
            #expect(!spindle_wfq_looks_empty(queue))
            try enqueue(queue, 2)
            #expect(!spindle_wfq_looks_empty(queue))
            #expect(spindle_wfq_splice_consumer(queue))
            #expect(spindle_wfq_looks_empty(queue), "both events are in the consumer's batch")
            try enqueue(queue, 3)
            #expect(!spindle_wfq_looks_empty(queue))
            #expect(drain(queue, max: 10) == [1, 2, 3])
            #expect(spindle_wfq_looks_empty(queue))
            try expectEveryNodeBackInThePool(queue)
        }

        /// Regression: is_empty once looked only at the shared queue, so it
        /// reported empty while spliced events were still unread.
        @Test func isEmptyIsFalseWhileTheConsumerBatchStillHoldsEvents() throws {
            let queue = try makeIntQueue()
            defer { spindle_wfq_destroy(queue) }
            for value in 1...3 { try enqueue(queue, value) }
            #expect(spindle_wfq_splice_consumer(queue))
            #expect(!spindle_wfq_is_empty_consumer(queue), "3 spliced events not read yet")
            #expect(spindle_wfq_next_consumer(queue)?.load(as: Int.self) == 1)
            #expect(!spindle_wfq_is_empty_consumer(queue), "2 spliced events not read yet")
            #expect(drain(queue, max: 10) == [2, 3])
            #expect(spindle_wfq_is_empty_consumer(queue))
            try expectEveryNodeBackInThePool(queue)
        }

        /// Regression: splice once counted the node `next` returned last
        /// (retired only by the following `next`) as unread, so a splice-first
        /// consumer ran one extra empty round.
        @Test func spliceCountsOnlyUnreadEvents() throws {
            let queue = try makeIntQueue()
            defer { spindle_wfq_destroy(queue) }
            try enqueue(queue, 1)
            #expect(spindle_wfq_splice_consumer(queue))
            #expect(spindle_wfq_next_consumer(queue)?.load(as: Int.self) == 1)
            #expect(!spindle_wfq_splice_consumer(queue), "nothing enqueued, nothing unread")
            #expect(spindle_wfq_next_consumer(queue) == nil)
            #expect(!spindle_wfq_splice_consumer(queue))
            try expectEveryNodeBackInThePool(queue)
        }

        @Test func spliceDuringABatchAppendsBehindIt() throws {
            let queue = try makeIntQueue()
            defer { spindle_wfq_destroy(queue) }
            for value in 1...3 { try enqueue(queue, value) }
            #expect(spindle_wfq_splice_consumer(queue))
            #expect(spindle_wfq_next_consumer(queue)?.load(as: Int.self) == 1)

            for value in 4...5 { try enqueue(queue, value) }
            #expect(spindle_wfq_splice_consumer(queue), "batch is non-empty")
            #expect(readBatch(queue) == [2, 3, 4, 5])

            // Enqueued after the batch ran out: invisible until the next splice.
            try enqueue(queue, 6)
            #expect(spindle_wfq_next_consumer(queue) == nil)
            #expect(drainAll(queue) == [6])
            try expectEveryNodeBackInThePool(queue)
        }

        // MARK: Node pool

        @Test func releasedNodesGoBackToThePool() throws {
            let queue = try makeIntQueue(nodesPerSlab: 64)
            defer { spindle_wfq_destroy(queue) }
            let first = try #require(spindle_wfq_acquire(queue))
            let poolSize = spindle_wfq_allocated_nodes(queue)
            #expect(poolSize == 64)

            // Take the whole pool, give it all back, take it again: no growth.
            var held = [first]
            for _ in 1..<poolSize { held.append(try #require(spindle_wfq_acquire(queue))) }
            #expect(spindle_wfq_allocated_nodes(queue) == poolSize)
            let firstRound = Set(held.map { UInt(bitPattern: $0) })
            for payload in held { spindle_wfq_release(queue, payload) }

            held = []
            for _ in 0..<poolSize { held.append(try #require(spindle_wfq_acquire(queue))) }
            #expect(spindle_wfq_allocated_nodes(queue) == poolSize, "released nodes were reused")
            let newNodes = Set(held.map { UInt(bitPattern: $0) }).subtracting(firstRound).count
            #expect(newNodes == 0, "the same nodes came back")
            for payload in held { spindle_wfq_release(queue, payload) }
        }

        @Test("Steady state allocates no nodes", arguments: [1, 63, 64, 500, 3000])
        func steadyStateAllocatesNoNodes(eventsPerCycle: Int) throws {
            let queue = try makeIntQueue(nodesPerSlab: 64)
            defer { spindle_wfq_destroy(queue) }
            func cycle(_ index: Int) throws {
                for offset in 0..<eventsPerCycle { try enqueue(queue, index * eventsPerCycle + offset) }
                let values = drainAll(queue)
                #expect(values == Array(index * eventsPerCycle..<(index + 1) * eventsPerCycle))
            }
            for index in 0..<3 { try cycle(index) }
            let warmedUp = spindle_wfq_allocated_nodes(queue)
            #expect(warmedUp >= eventsPerCycle)
            for index in 3..<40 { try cycle(index) }
            #expect(spindle_wfq_allocated_nodes(queue) == warmedUp)
            try expectEveryNodeBackInThePool(queue)
        }

        /// The engine drains at most `max` events per call, so its consumer
        /// usually stops in the middle of a batch; retired nodes must still
        /// find their way back to the pool.
        @Test("Steady state when the consumer stops mid-batch",
              arguments: [(eventsPerCycle: 100, drainMax: 7), (1000, 300), (10, 1), (700, 256)])
        func steadyStateWhenTheConsumerStopsMidBatch(eventsPerCycle: Int, drainMax: Int) throws {
            let queue = try makeIntQueue(nodesPerSlab: 64)
            defer { spindle_wfq_destroy(queue) }
            var next = 0
            var expected = 0
            var outOfOrder = 0
            func cycle() throws {
                for _ in 0..<eventsPerCycle {
                    try enqueue(queue, next)
                    next += 1
                }
                var consumed = 0
                while consumed < eventsPerCycle {
                    let values = drain(queue, max: drainMax)
                    if values.isEmpty { break }
                    for value in values {
                        if value != expected { outOfOrder += 1 }
                        expected = value + 1
                    }
                    consumed += values.count
                }
                #expect(consumed == eventsPerCycle)
            }
            // Warm-up covers more than one 64-node chain of finished nodes
            // (they return to the pool in chains, see spindle_wfq_flush_consumer).
            for _ in 0..<20 { try cycle() }
            let warmedUp = spindle_wfq_allocated_nodes(queue)
            for _ in 0..<40 { try cycle() }
            #expect(spindle_wfq_allocated_nodes(queue) == warmedUp)
            #expect(outOfOrder == 0)
            #expect(drainAll(queue).isEmpty)
            try expectEveryNodeBackInThePool(queue)
        }

        @Test func manyOutstandingNodesGrowThePoolWithDistinctPayloads() throws {
            let queue = try makeIntQueue(nodesPerSlab: 64)
            defer { spindle_wfq_destroy(queue) }
            let outstanding = 5000
            var payloads: [UnsafeMutableRawPointer] = []
            for index in 0..<outstanding {
                let payload = try #require(spindle_wfq_acquire(queue))
                payload.storeBytes(of: index, as: Int.self)
                payloads.append(payload)
            }
            let grown = spindle_wfq_allocated_nodes(queue)
            #expect(grown >= outstanding)
            #expect(Set(payloads.map { UInt(bitPattern: $0) }).count == outstanding)
            // Every payload still holds its own value: no two nodes overlap.
            let corrupted = payloads.indices.filter { payloads[$0].load(as: Int.self) != $0 }
            #expect(corrupted.isEmpty)

            for payload in payloads { spindle_wfq_release(queue, payload) }
            for _ in 0..<outstanding { payloads.removeLast() }
            for _ in 0..<outstanding { payloads.append(try #require(spindle_wfq_acquire(queue))) }
            #expect(spindle_wfq_allocated_nodes(queue) == grown, "a second round reuses the released nodes")
            for payload in payloads { spindle_wfq_release(queue, payload) }
        }

        @Test("nodes_per_slab rounds up to a power of two, at least 8",
              arguments: [(requested: 0, slab: 8), (1, 8), (7, 8), (8, 8), (9, 16), (63, 64), (64, 64), (65, 128),
                          (100, 128), (1000, 1024)])
        func firstSlabSize(requested: Int, slab: Int) throws {
            let queue = try #require(spindle_wfq_create(8, 8, requested))
            defer { spindle_wfq_destroy(queue) }
            let payload = try #require(spindle_wfq_acquire(queue))
            #expect(spindle_wfq_allocated_nodes(queue) == slab)
            spindle_wfq_release(queue, payload)
        }

        // MARK: Payload layout

        @Test("Payloads are aligned and do not overlap",
              arguments: [1, 2, 4, 8, 16, 32, 64], [1, 8, 24, 200])
        func payloadsAreAlignedAndDisjoint(align: Int, size: Int) throws {
            let queue = try #require(spindle_wfq_create(size, align, 64))
            defer { spindle_wfq_destroy(queue) }
            // 300 nodes span three slabs (64 + 128 + 256).
            var payloads: [UnsafeMutableRawPointer] = []
            for index in 0..<300 {
                let payload = try #require(spindle_wfq_acquire(queue))
                payload.initializeMemory(as: UInt8.self, repeating: UInt8(truncatingIfNeeded: index), count: size)
                payloads.append(payload)
            }
            let misaligned = payloads.filter { UInt(bitPattern: $0) % UInt(align) != 0 }
            #expect(misaligned.isEmpty)
            let addresses = payloads.map { UInt(bitPattern: $0) }.sorted()
            let overlapping = zip(addresses, addresses.dropFirst()).filter { $1 - $0 < UInt(size) }
            #expect(overlapping.isEmpty)
            let clobbered = payloads.indices.filter { index in
                let bytes = UnsafeRawBufferPointer(start: payloads[index], count: size)
                return bytes.contains { $0 != UInt8(truncatingIfNeeded: index) }
            }
            #expect(clobbered.isEmpty)
            for payload in payloads { spindle_wfq_release(queue, payload) }
        }

        @Test("create rejects alignments that are not a power of two up to 64",
              arguments: [0, 3, 6, 12, 48, 96, 128, 256])
        func createRejectsBadAlignment(align: Int) {
            let queue = spindle_wfq_create(8, align, 64)
            #expect(queue == nil)
            if let queue { spindle_wfq_destroy(queue) }
        }

        // MARK: Concurrency

        /// The free list is a Treiber stack with an ABA tag: if two threads
        /// ever popped the same node, one would overwrite the other's token.
        @Test func concurrentAcquireAndReleaseNeverShareANode() throws {
            let raw = try makeIntQueue(nodesPerSlab: 64)
            let queue = SharedHandle(raw: raw)
            let progress = StressProgress()
            let threadCount = 4
            let heldPerThread = 4
            let iterations = 100_000
            let threads = TestThreads(threadCount, name: "wfq-pool") { thread in
                progress.arriveAndWaitForStart(parties: threadCount)
                var held: [UnsafeMutableRawPointer] = []
                held.reserveCapacity(heldPerThread)
                for iteration in 0..<iterations {
                    for slot in 0..<heldPerThread {
                        guard let payload = spindle_wfq_acquire(queue.raw) else {
                            progress.failures.add(1, ordering: .relaxed)
                            return
                        }
                        payload.storeBytes(of: thread << 40 | iteration << 8 | slot, as: Int.self)
                        held.append(payload)
                    }
                    for (slot, payload) in held.enumerated()
                    where payload.load(as: Int.self) != thread << 40 | iteration << 8 | slot {
                        progress.failures.add(1, ordering: .relaxed)
                    }
                    for payload in held { spindle_wfq_release(queue.raw, payload) }
                    held.removeAll(keepingCapacity: true)
                }
            }
            let joined = threads.join()
            #expect(joined)
            guard joined else { return }  // leak: a thread may still use it
            defer { spindle_wfq_destroy(raw) }
            #expect(progress.failures.load(ordering: .relaxed) == 0, "a node was owned by two threads")
            // 16 nodes held at most, so the first 64-node slab always sufficed.
            #expect(spindle_wfq_allocated_nodes(raw) == 64)
        }

        /// Growth under contention: four threads take nodes from an empty
        /// pool of 8-node slabs at once and hold them, so the pool grows
        /// past the two slabs whose addresses the header keeps inline into
        /// the slab table, with threads racing on the grow lock. Every node
        /// is distinct and keeps its value, and the pool is exactly the
        /// slabs grown (8 + 16 + 32 + …).
        @Test func concurrentGrowthPastTheInlineSlabsGivesDistinctNodes() throws {
            let raw = try makeIntQueue(nodesPerSlab: 8)
            let queue = SharedHandle(raw: raw)
            let progress = StressProgress()
            let threadCount = 4
            let perThread = 3_000
            // Each thread writes only its own slots; `join` orders them before the reads.
            let held = SharedSlots(count: threadCount * perThread)
            defer { held.deallocate() }
            let threads = TestThreads(threadCount, name: "wfq-grow") { thread in
                progress.arriveAndWaitForStart(parties: threadCount)
                for index in 0..<perThread {
                    guard let payload = spindle_wfq_acquire(queue.raw) else {
                        progress.failures.add(1, ordering: .relaxed)
                        return
                    }
                    let slot = thread * perThread + index
                    payload.storeBytes(of: slot, as: Int.self)
                    held.base[slot] = Int(bitPattern: payload)
                }
            }
            let joined = threads.join()
            #expect(joined)
            guard joined else { return }  // leak: a thread may still use it
            defer { spindle_wfq_destroy(raw) }
            #expect(progress.failures.load(ordering: .relaxed) == 0, "acquire failed while growing")
            let payloads = (0..<threadCount * perThread).compactMap { slot in
                held.base[slot] == -1 ? nil : UnsafeMutableRawPointer(bitPattern: held.base[slot])
            }
            #expect(payloads.count == threadCount * perThread, "a thread did not record all its nodes")
            #expect(Set(payloads).count == payloads.count, "two threads got the same node")
            let corrupted = payloads.indices.filter { payloads[$0].load(as: Int.self) != $0 }
            #expect(corrupted.isEmpty, "a node's payload was overwritten by another owner")
            // Slabs double from 8: the pool is 8 × (2^k − 1) for the k slabs grown, k > 2.
            let allocated = spindle_wfq_allocated_nodes(raw)
            let slabs = (allocated / 8 + 1).trailingZeroBitCount
            #expect(allocated >= payloads.count && slabs > 2 && allocated == 8 * ((1 << slabs) - 1),
                    "pool of \(allocated) nodes")
            for payload in payloads { spindle_wfq_release(raw, payload) }
        }

        @Test func multiProducerStressKeepsEveryEventAndPerProducerOrder() throws {
            let producers = 4
            let perProducer = 200_000
            let raw = try makeIntQueue(nodesPerSlab: 1024)
            let queue = SharedHandle(raw: raw)
            let progress = StressProgress()
            let threads = TestThreads(producers, name: "wfq-producer") { producer in
                progress.arriveAndWaitForStart(parties: producers)
                for sequence in 0..<perProducer {
                    if sequence & 1023 == 0, progress.abort.load(ordering: .relaxed) { break }
                    guard let payload = spindle_wfq_acquire(queue.raw) else {
                        progress.failures.add(1, ordering: .relaxed)
                        break
                    }
                    payload.storeBytes(of: ProducerStreamCheck.encode(producer: producer, sequence: sequence),
                                       as: Int.self)
                    spindle_wfq_enqueue(queue.raw, payload)
                }
                progress.finishedProducers.add(1, ordering: .releasing)
            }

            try consumeAndCheck(raw, producers: producers, perProducer: perProducer, progress: progress, threads: threads)
        }

        /// Batches (`spindle_wfq_acquire_many` + `spindle_wfq_enqueue_many`)
        /// of 1…200 nodes from four producers, mixed with single enqueues,
        /// against a concurrent consumer: every event once, each producer's
        /// in order, every node back in the pool.
        @Test func batchedProducersKeepEveryEventAndPerProducerOrder() throws {
            let producers = 4
            let perProducer = 200_000
            // A small slab: batches run the pool dry and make it grow.
            let raw = try makeIntQueue(nodesPerSlab: 8)
            let queue = SharedHandle(raw: raw)
            let progress = StressProgress()
            let threads = TestThreads(producers, name: "wfq-batch-producer") { producer in
                progress.arriveAndWaitForStart(parties: producers)
                var payloads = [UnsafeMutableRawPointer?](repeating: nil, count: 200)
                var sequence = 0
                var size = producer + 1
                while sequence < perProducer {
                    if progress.abort.load(ordering: .relaxed) { break }
                    size = size % 200 + 1 + producer
                    let count = min(size > 200 ? 1 : size, perProducer - sequence)
                    let taken = payloads.withUnsafeMutableBufferPointer { buffer in
                        spindle_wfq_acquire_many(queue.raw, buffer.baseAddress!, count)
                    }
                    guard taken == count else {
                        progress.failures.add(1, ordering: .relaxed)
                        break
                    }
                    for offset in 0..<count {
                        payloads[offset]!.storeBytes(
                            of: ProducerStreamCheck.encode(producer: producer, sequence: sequence + offset), as: Int.self)
                    }
                    if count == 1 {
                        spindle_wfq_enqueue(queue.raw, payloads[0])
                    } else {
                        payloads.withUnsafeBufferPointer { buffer in
                            spindle_wfq_enqueue_many(queue.raw, buffer.baseAddress!, count)
                        }
                    }
                    sequence += count
                }
                progress.finishedProducers.add(1, ordering: .releasing)
            }

            try consumeAndCheck(raw, producers: producers, perProducer: perProducer, progress: progress, threads: threads)
        }
    }
}
