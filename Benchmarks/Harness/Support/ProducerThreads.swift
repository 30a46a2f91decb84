import Foundation

/// Producer threads for a scenario: real OS threads (Foundation `Thread`),
/// created before the measured region, parked at a start gate, released
/// together.
///
/// Use: create, `await waitUntilReady`, begin the region, `release()`,
/// `await waitUntilFinished`.
final class ProducerThreads: Sendable {
    private let gate = StartGate()
    private let ready: Countdown
    private let finished: Countdown
    let count: Int

    /// Starts `count` threads; each waits at the gate, then runs
    /// `body(index)` with its index in `0..<count`.
    init(count: Int, name: String, body: @escaping @Sendable (Int) -> Void) {
        self.count = count
        ready = Countdown(count)
        finished = Countdown(count)
        for index in 0..<count {
            let threadName = "\(name)-\(index)"
            let thread = Thread { [gate, ready, finished] in
                // Named from inside: on Linux a name set before start() is
                // not applied, and the thread would show its creator's name
                // (a dispatch worker's) in ps and perf.
                Thread.current.name = threadName
                ready.arrive()
                gate.wait()
                body(index)
                finished.arrive()
            }
            thread.start()
        }
    }

    /// Returns once every thread exists and has reached the gate.
    func waitUntilReady(in run: ScenarioRun) async throws {
        try await ready.wait(timeout: .seconds(30), "producer threads to start", in: run)
    }

    /// Opens the gate: every producer starts emitting.
    func release() {
        gate.open()
    }

    /// Returns once every producer's body has returned.
    func waitUntilFinished(in run: ScenarioRun) async throws {
        try await finished.wait(timeout: run.timeout, "producer threads to finish", in: run)
    }
}
