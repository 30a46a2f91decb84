import CSPSCProbe

/// The machine's limit for one producer feeding one consumer: a plain C11
/// single-producer / single-consumer ring of 16-byte events, indices
/// published once per batch of up to 256 and each side caching the other's
/// (the Disruptor's and FastFlow's shape; `Benchmarks/CSPSCProbe`). No
/// multi-producer queue, engine or reducer can move events between two
/// threads faster on this machine, so every one-loop throughput figure is
/// read against it (the lockfree queue alone is the ceiling of Spindle's own
/// queue design; this is the ceiling of the hardware).
///
/// The median of 5 rounds of 50,000,000 events; the consumer checks every
/// event's sequence and payload (a round that saw one out of order is void).
enum SPSCLimitProbe {
    static func eventsPerSecond(events: UInt64 = 50_000_000, rounds: Int = 5) -> Double? {
        var samples: [Double] = []
        for _ in 0..<rounds {
            let elapsed = cspsc_probe_run(events)
            guard elapsed > 0 else { return nil }
            samples.append(Double(events) / (Double(elapsed) / 1e9))
        }
        samples.sort()
        return samples[samples.count / 2]
    }
}
