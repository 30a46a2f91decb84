import Foundation
import Synchronization

/// The machine's floor for any hand-off between two threads: two threads
/// bounce one value between two cache lines (a ping and a pong), spinning,
/// with nothing else in between. One round trip is two cache-line
/// transfers between cores, the least that a reducer → feedback → reducer
/// round trip (`feedback-loop`, `latency-closed`) can cost.
///
/// Measured once per run, before the scenarios: the median of 5 rounds of
/// 20,000 round trips. Reported with the run's context, so that the
/// round-trip scenarios can be read against it. On a loaded machine a
/// spinning thread can be preempted, which shows here as well.
enum CrossCoreProbe {
    /// Two atomics on separate cache lines (the padding is 64 bytes).
    private final class Lines: Sendable {
        let ping = Atomic<Int>(0)
        let padding: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
        let pong = Atomic<Int>(0)
    }

    /// The median round trip in nanoseconds.
    static func roundTripNanoseconds(roundTrips: Int = 20_000, rounds: Int = 5) -> Double {
        var samples: [Double] = []
        for _ in 0..<rounds {
            samples.append(measure(roundTrips))
        }
        samples.sort()
        return samples[samples.count / 2]
    }

    private static func measure(_ count: Int) -> Double {
        let lines = Lines()
        let done = DispatchSemaphore(value: 0)
        let answerer = Thread {
            for index in 1...count {
                while lines.ping.load(ordering: .acquiring) != index {}
                lines.pong.store(index, ordering: .releasing)
            }
            done.signal()
        }
        answerer.start()
        let start = MonotonicClock.now()
        for index in 1...count {
            lines.ping.store(index, ordering: .releasing)
            while lines.pong.load(ordering: .acquiring) != index {}
        }
        let elapsed = MonotonicClock.now() - start
        done.wait()
        return Double(elapsed) / Double(count)
    }
}
