import SpindleTestSupport
import CSpindle
import Foundation
import Synchronization
import Testing

/// Claims `count` slots, expecting all of them; returns the first sequence.
private func claim(_ ring: OpaquePointer, _ count: Int,
                   sourceLocation: SourceLocation = #_sourceLocation) throws -> UInt64 {
    var first: UInt64 = .max
    let claimed = spindle_ring_claim(ring, count, &first)
    try #require(claimed == count, sourceLocation: sourceLocation)
    return first
}

/// Consumer: the published run at the head, at most `max` long.
private func available(_ ring: OpaquePointer, max: Int) -> (first: UInt64, count: Int) {
    var first: UInt64 = .max
    let count = spindle_ring_available_consumer(ring, max, &first)
    return (first, count)
}

extension CSpindleTarget {
    @Suite("spindle_ring: bounded MPSC ring of sequence numbers")
    struct RingTests {
        // MARK: Creation

        @Test("Capacity rounds up to a power of two, at least 2",
              arguments: [(requested: 0, capacity: 2), (1, 2), (2, 2), (3, 4), (5, 8), (8, 8), (9, 16), (1000, 1024)])
        func capacityRoundsUp(requested: Int, capacity: Int) throws {
            let ring = try #require(spindle_ring_create(requested))
            defer { spindle_ring_destroy(ring) }
            #expect(spindle_ring_capacity(ring) == capacity)
            #expect(spindle_ring_depth(ring) == 0)
        }

        /// Kept to a few values: a ring that wrongly accepts one of these
        /// would touch 16 GiB or more initializing its slots.
        @Test("create refuses capacities above 2^30",
              arguments: [(1 << 30) + 1, 1 << 40, Int.max])
        func createRefusesHugeCapacities(requested: Int) {
            let ring = spindle_ring_create(requested)
            #expect(ring == nil)
            if let ring { spindle_ring_destroy(ring) }
        }

        // MARK: Claim / publish / available / release

        @Test func singleSlotRoundTrip() throws {
            let ring = try #require(spindle_ring_create(8))
            defer { spindle_ring_destroy(ring) }
            #expect(available(ring, max: 8).count == 0)

            let sequence = try claim(ring, 1)
            #expect(sequence == 0)
            #expect(spindle_ring_depth(ring) == 1)
            #expect(available(ring, max: 8).count == 0, "claimed but not published")

            spindle_ring_publish(ring, sequence)
            let run = available(ring, max: 8)
            #expect(run.first == 0)
            #expect(run.count == 1)
            #expect(spindle_ring_depth(ring) == 1, "published but not released")

            spindle_ring_release_consumer(ring, 1)
            #expect(spindle_ring_depth(ring) == 0)
            let after = available(ring, max: 8)
            #expect(after.first == 1)
            #expect(after.count == 0)
            #expect(try claim(ring, 1) == 1)
        }

        @Test("A full ring refuses claims until the consumer releases", arguments: [2, 8, 64])
        func fullRingRefusesClaims(capacity: Int) throws {
            let ring = try #require(spindle_ring_create(capacity))
            defer { spindle_ring_destroy(ring) }
            for expected in 0..<capacity {
                #expect(try claim(ring, 1) == UInt64(expected))
            }
            #expect(spindle_ring_depth(ring) == capacity)
            var first: UInt64 = .max
            #expect(spindle_ring_claim(ring, 1, &first) == 0)
            #expect(spindle_ring_claim(ring, capacity, &first) == 0)
            #expect(spindle_ring_depth(ring) == capacity, "a refused claim takes nothing")

            for sequence in 0..<UInt64(capacity) { spindle_ring_publish(ring, sequence) }
            #expect(available(ring, max: capacity).count == capacity)
            spindle_ring_release_consumer(ring, 1)
            #expect(spindle_ring_claim(ring, 1, &first) == 1)
            #expect(first == UInt64(capacity), "the freed slot comes back as the next lap's sequence")
            #expect(spindle_ring_claim(ring, 1, &first) == 0)
        }

        @Test func partlyFullRingClaimsNoMoreThanTheFreeSlots() throws {
            let ring = try #require(spindle_ring_create(8))
            defer { spindle_ring_destroy(ring) }
            _ = try claim(ring, 5)
            var first: UInt64 = .max
            let claimed = spindle_ring_claim(ring, 8, &first)
            #expect((1...3).contains(claimed), "some of the 3 free slots, never more")
            #expect(first == 5)
            #expect(spindle_ring_depth(ring) == 5 + claimed)
        }

        @Test("A batch claim returns consecutive sequence numbers",
              arguments: [(capacity: 8, batches: [5, 3]), (8, [1, 2, 4, 1]), (64, [64]), (16, [7, 7, 2])])
        func batchClaimIsConsecutive(capacity: Int, batches: [Int]) throws {
            let ring = try #require(spindle_ring_create(capacity))
            defer { spindle_ring_destroy(ring) }
            var next: UInt64 = 0
            for batch in batches {
                #expect(try claim(ring, batch) == next)
                next += UInt64(batch)
            }
            #expect(spindle_ring_depth(ring) == Int(next))
            for sequence in 0..<next { spindle_ring_publish(ring, sequence) }
            let run = available(ring, max: capacity)
            #expect(run.first == 0)
            #expect(run.count == Int(next))
        }

        @Test func claimCountIsClampedToTheCapacity() throws {
            let ring = try #require(spindle_ring_create(8))
            defer { spindle_ring_destroy(ring) }
            var first: UInt64 = .max
            #expect(spindle_ring_claim(ring, 100, &first) == 8)
            #expect(first == 0)
            #expect(spindle_ring_claim(ring, 0, &first) == 0)
        }

        @Test func availableStopsAtTheFirstUnpublishedSlot() throws {
            let ring = try #require(spindle_ring_create(8))
            defer { spindle_ring_destroy(ring) }
            let first = try claim(ring, 4)
            spindle_ring_publish(ring, first)
            spindle_ring_publish(ring, first + 2)
            spindle_ring_publish(ring, first + 3)
            #expect(available(ring, max: 8).count == 1, "slot 1 is not published")
            #expect(available(ring, max: 0).count == 0)

            spindle_ring_publish(ring, first + 1)
            #expect(available(ring, max: 8).count == 4)
            #expect(available(ring, max: 3).count == 3, "at most max")

            // Next lap: consume 4...7 so that the head is at 8, in slot 0, which
            // still holds the value lap 0's release left there. available must
            // not read it as published, nor run past it to 9 and 10.
            spindle_ring_release_consumer(ring, 4)
            let middle = try claim(ring, 4)
            #expect(middle == 4)
            for sequence in middle..<middle + 4 { spindle_ring_publish(ring, sequence) }
            #expect(available(ring, max: 8).count == 4)
            spindle_ring_release_consumer(ring, 4)
            let next = try claim(ring, 4)
            #expect(next == 8)
            spindle_ring_publish(ring, 9)
            spindle_ring_publish(ring, 10)
            let run = available(ring, max: 8)
            #expect(run.first == 8)
            #expect(run.count == 0, "8 is unpublished although 9 and 10 are")
            spindle_ring_publish(ring, 8)
            #expect(available(ring, max: 8).count == 3, "8, 9 and 10; 11 is unpublished")
        }

        @Test func depthCountsClaimedButUnreleasedSlots() throws {
            let ring = try #require(spindle_ring_create(16))
            defer { spindle_ring_destroy(ring) }
            let first = try claim(ring, 3)
            #expect(spindle_ring_depth(ring) == 3)
            for sequence in first..<first + 3 { spindle_ring_publish(ring, sequence) }
            #expect(spindle_ring_depth(ring) == 3)
            spindle_ring_release_consumer(ring, 2)
            #expect(spindle_ring_depth(ring) == 1)
            _ = try claim(ring, 5)
            #expect(spindle_ring_depth(ring) == 6)
            spindle_ring_release_consumer(ring, 1)
            #expect(spindle_ring_depth(ring) == 5)
        }

        /// Many laps with payloads in a Swift array indexed by `seq & mask`,
        /// as RingQueue does.
        @Test("Wrap-around over many laps", arguments: [2, 8, 64])
        func wrapsAroundOverManyLaps(capacity: Int) throws {
            let ring = try #require(spindle_ring_create(capacity))
            defer { spindle_ring_destroy(ring) }
            let mask = UInt64(capacity - 1)
            var payloads = [Int](repeating: -1, count: capacity)
            var expected: UInt64 = 0
            var mismatches = 0
            for cycle in 0..<2_000 {
                let batch = 1 + cycle % capacity
                let first = try claim(ring, batch)
                if first != expected { mismatches += 1 }
                for offset in 0..<UInt64(batch) {
                    payloads[Int((first + offset) & mask)] = Int(first + offset) * 3
                    spindle_ring_publish(ring, first + offset)
                }
                let run = available(ring, max: capacity)
                if run.first != expected || run.count != batch { mismatches += 1 }
                for offset in 0..<UInt64(run.count)
                where payloads[Int((run.first + offset) & mask)] != Int(run.first + offset) * 3 {
                    mismatches += 1
                }
                // Never more than was published: releasing unpublished slots
                // corrupts the ring so that the next claim spins forever.
                spindle_ring_release_consumer(ring, min(run.count, batch))
                expected += UInt64(batch)
            }
            #expect(mismatches == 0)
            #expect(expected > UInt64(capacity) * 100, "sequence numbers lapped the ring many times")
            #expect(spindle_ring_depth(ring) == 0)
        }

        /// Random claims, out-of-order publishes and partial releases, checked
        /// against a model of the ring (head, tail, published set).
        @Test("Random operations agree with a model", arguments: [2, 4, 16, 64])
        func randomOperationsAgreeWithAModel(capacity: Int) throws {
            let ring = try #require(spindle_ring_create(capacity))
            defer { spindle_ring_destroy(ring) }
            var random = SplitMix64(seed: UInt64(capacity) &* 0x5EED)
            let mask = UInt64(capacity - 1)
            var payloads = [Int](repeating: -1, count: capacity)
            var head: UInt64 = 0  // next sequence to consume
            var tail: UInt64 = 0  // next sequence to claim
            var unpublished: [UInt64] = []
            var published = Set<UInt64>()
            var failures: [String] = []

            for step in 0..<30_000 where failures.count < 10 {
                switch Int.random(in: 0..<3, using: &random) {
                case 0:
                    let count = Int.random(in: 1...capacity + 2, using: &random)
                    let free = capacity - Int(tail - head)
                    var first: UInt64 = .max
                    let claimed = spindle_ring_claim(ring, count, &first)
                    if free == 0 {
                        if claimed != 0 { failures.append("step \(step): claimed \(claimed) of a full ring") }
                        continue
                    }
                    guard (1...min(count, free)).contains(claimed), first == tail else {
                        failures.append("step \(step): claim(\(count)) with \(free) free gave \(claimed) at \(first), tail \(tail)")
                        continue
                    }
                    for sequence in first..<first + UInt64(claimed) {
                        payloads[Int(sequence & mask)] = Int(sequence)
                        unpublished.append(sequence)
                    }
                    tail += UInt64(claimed)
                case 1:
                    guard !unpublished.isEmpty else { continue }
                    let sequence = unpublished.remove(at: Int.random(in: unpublished.indices, using: &random))
                    published.insert(sequence)
                    spindle_ring_publish(ring, sequence)
                default:
                    let max = Int.random(in: 0...capacity, using: &random)
                    var expectedRun = 0
                    while expectedRun < max, published.contains(head + UInt64(expectedRun)) { expectedRun += 1 }
                    let run = available(ring, max: max)
                    guard run.first == head, run.count == expectedRun else {
                        failures.append("step \(step): available(\(max)) gave \(run), expected \(expectedRun) at \(head)")
                        continue
                    }
                    for sequence in head..<head + UInt64(run.count) where payloads[Int(sequence & mask)] != Int(sequence) {
                        failures.append("step \(step): payload of \(sequence) is \(payloads[Int(sequence & mask)])")
                    }
                    let released = Int.random(in: 0...run.count, using: &random)
                    spindle_ring_release_consumer(ring, released)
                    for sequence in head..<head + UInt64(released) { published.remove(sequence) }
                    head += UInt64(released)
                }
                if spindle_ring_depth(ring) != Int(tail - head) {
                    failures.append("step \(step): depth \(spindle_ring_depth(ring)), expected \(tail - head)")
                }
            }
            #expect(failures.isEmpty, "\(failures)")
            #expect(tail > UInt64(capacity) * 100, "the model lapped the ring many times")
        }

        // MARK: Concurrency

        @Test func multiProducerStressWithASmallRingKeepsEveryEventAndOrder() throws {
            let producers = 4
            let perProducer = 200_000
            let capacity = 64
            let raw = try #require(spindle_ring_create(capacity))
            let ring = SharedHandle(raw: raw)
            let slots = SharedSlots(count: capacity)
            let mask = UInt64(capacity - 1)
            let progress = StressProgress()
            let threads = TestThreads(producers, name: "ring-producer") { producer in
                progress.arriveAndWaitForStart(parties: producers)
                // Even producers claim one slot at a time, odd ones up to 4.
                let batch = producer % 2 == 0 ? 1 : 4
                var sequence = 0
                while sequence < perProducer {
                    var first: UInt64 = 0
                    let claimed = spindle_ring_claim(ring.raw, min(batch, perProducer - sequence), &first)
                    if claimed == 0 {
                        // Full: counted, then retry once the consumer ran.
                        progress.failures.add(1, ordering: .relaxed)
                        if progress.abort.load(ordering: .relaxed) { break }
                        sched_yield()
                        continue
                    }
                    for offset in 0..<UInt64(claimed) {
                        slots.base[Int((first + offset) & mask)] =
                            ProducerStreamCheck.encode(producer: producer, sequence: sequence)
                        sequence += 1
                    }
                    for offset in 0..<UInt64(claimed) { spindle_ring_publish(ring.raw, first + offset) }
                }
                progress.finishedProducers.add(1, ordering: .releasing)
            }

            // This (test) thread is the single consumer. It first lets the
            // producers fill the ring, so that the full path surely runs.
            let fillDeadline = ContinuousClock.now + hangGuard  // producers fill it at once unless starved
            while progress.failures.load(ordering: .relaxed) == 0, ContinuousClock.now < fillDeadline {
                sched_yield()
            }
            let sawFullRing = progress.failures.load(ordering: .relaxed) > 0

            var check = ProducerStreamCheck(producers: producers, perProducer: perProducer)
            var head: UInt64 = 0
            var headMismatches = 0
            var round = 0
            let deadline = ContinuousClock.now + .seconds(300)  // a hang guard, not a speed check
            var timedOut = false
            var idle = ConsumerIdle()
            while true {
                // Checked on every path: a broken ring may report runs forever.
                if round & 255 == 0, ContinuousClock.now > deadline || check.received > producers * perProducer {
                    timedOut = true
                    progress.abort.store(true, ordering: .relaxed)
                    break
                }
                var first: UInt64 = 0
                // Mix single-slot and whole-ring runs.
                let max = round % 4 == 0 ? 1 : capacity
                round += 1
                let run = spindle_ring_available_consumer(raw, max, &first)
                if run > 0 {
                    if first != head { headMismatches += 1 }
                    for offset in 0..<UInt64(run) { check.record(slots.base[Int((first + offset) & mask)]) }
                    spindle_ring_release_consumer(raw, run)
                    head = first + UInt64(run)
                    continue
                }
                if progress.finishedProducers.load(ordering: .acquiring) == producers {
                    // Every publish happened before that load: one last look.
                    if spindle_ring_available_consumer(raw, capacity, &first) > 0 { continue }
                    break
                }
                idle.pause()
            }
            // After an abort a producer may be stuck inside a broken claim.
            let joined = threads.join(timeoutSeconds: timedOut ? 5 : Int(hangGuardSeconds))
            #expect(joined)
            #expect(!timedOut)
            #expect(sawFullRing, "producers met a full ring and retried")
            check.expectEveryEventExactlyOnceInProducerOrder()
            #expect(headMismatches == 0)
            guard joined else { return }  // leak: a producer may still use it
            defer {
                slots.deallocate()
                spindle_ring_destroy(raw)
            }
            // Nothing claimed and unreleased is left: the whole ring is free.
            #expect(spindle_ring_depth(raw) == 0)
            var first: UInt64 = 0
            #expect(spindle_ring_claim(raw, capacity, &first) == capacity)
            #expect(first == UInt64(producers * perProducer))
        }
    }
}
