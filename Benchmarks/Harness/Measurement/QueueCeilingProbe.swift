import CSpindle
import Foundation

/// The `lockfree` engine's queue on its own: one producer thread and one
/// consumer thread on the C wait-free queue (`spindle_wfq_*`), an 8-byte
/// payload, no engine around it (no gate, no parker, no reducer). Its rate
/// is the most any engine on this queue can reach here with one producer,
/// so `reduce-1p` is read against it.
///
/// Two figures, each the median of 5 rounds of 2,000,000 events:
/// - **eager**: the consumer splices again as soon as its batch is done,
///   as a reducer that keeps up does;
/// - **batched**: the consumer waits ~1,000 CPU pauses after each batch, so
///   batches grow and the two threads touch the same cache lines less often.
enum QueueCeilingProbe {
    struct Result: Sendable {
        let eagerEventsPerSecond: Double
        let batchedEventsPerSecond: Double
    }

    static func measure(events: Int = 2_000_000, rounds: Int = 5) -> Result {
        func median(_ pauses: Int) -> Double {
            var samples = (0..<rounds).map { _ in run(events: events, pausesAfterBatch: pauses) }
            samples.sort()
            return samples[samples.count / 2]
        }
        return Result(eagerEventsPerSecond: median(0), batchedEventsPerSecond: median(1_000))
    }

    private static func run(events: Int, pausesAfterBatch: Int) -> Double {
        guard let queue = spindle_wfq_create(8, 8, 1024) else { fatalError("benchmarks: out of memory") }
        defer {
            spindle_wfq_flush_consumer(queue)
            spindle_wfq_destroy(queue)
        }
        // The producer thread only acquires and enqueues, which the C queue
        // allows from any thread (spindle_wfq.h's concurrency table); this
        // thread is the one consumer.
        nonisolated(unsafe) let shared = queue
        let ready = DispatchSemaphore(value: 0)
        let go = DispatchSemaphore(value: 0)
        let producer = Thread {
            ready.signal()
            go.wait()
            for value in 0..<events {
                guard let payload = spindle_wfq_acquire(shared) else { fatalError("benchmarks: out of memory") }
                payload.storeBytes(of: value, as: Int.self)
                spindle_wfq_enqueue(shared, payload)
            }
        }
        producer.start()
        ready.wait()
        var expected = 0
        let start = MonotonicClock.now()
        go.signal()
        while expected < events {
            guard spindle_wfq_splice_consumer(queue) else {
                spindle_cpu_relax()
                continue
            }
            while let payload = spindle_wfq_next_consumer(queue) {
                let value = payload.load(as: Int.self)
                precondition(value == expected, "benchmarks: the C queue reordered events")
                expected += 1
            }
            for _ in 0..<pausesAfterBatch { spindle_cpu_relax() }
        }
        let elapsed = MonotonicClock.now() - start
        return Double(events) / (Double(elapsed) / 1e9)
    }
}
