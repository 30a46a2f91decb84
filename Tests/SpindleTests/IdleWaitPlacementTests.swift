@testable import Spindle
import Foundation
import Testing

#if os(Linux)
import Glibc

// The runner's wait for a loop's next event before its idle transition
// (`ScheduledLoop.waitForNextEvent`) is left out when the wake that began
// its scheduling came from the runner's own core: the emitting thread is
// on that core then, waiting for the state, and a poll would only keep it
// off. The threads are pinned (`sched_setaffinity`) so that the cores are
// known: a new thread starts with the mask of the thread that made it, so
// the executor's threads (a dedicated thread, made by the loop's start; a
// new pool's, made by its first start) run where the producer was pinned
// then. Every thread pinned here is one of the test's own, which exits.

@Suite struct IdleWaitPlacementTests {
    enum Executor: CaseIterable, Sendable { case dedicatedThread, pool }

    // `sched_getaffinity` and `sched_setaffinity` (glibc's, found at run
    // time: the Glibc module leaves out its GNU declarations), on a CPU
    // mask of `maskBytes` bytes (glibc's `cpu_set_t`).
    private typealias AffinityCall = @convention(c) (pid_t, Int, UnsafeMutableRawPointer) -> Int32
    private static let maskBytes = 128
    private static func affinityCall(_ name: String) -> AffinityCall {
        guard let symbol = dlsym(nil, name) else { preconditionFailure("no \(name)") }
        return unsafeBitCast(symbol, to: AffinityCall.self)
    }

    /// The CPUs this process may run on.
    private static func allowedCPUs() -> [Int32] {
        var mask = [UInt8](repeating: 0, count: maskBytes)
        let read = mask.withUnsafeMutableBytes { affinityCall("sched_getaffinity")(0, maskBytes, $0.baseAddress!) }
        guard read == 0 else { return [] }
        return (0..<Int32(maskBytes * 8)).filter { mask[Int($0) / 8] & UInt8(1 << ($0 % 8)) != 0 }
    }

    /// Pins the calling thread to `cpu`.
    private static func pin(to cpu: Int32) {
        var mask = [UInt8](repeating: 0, count: maskBytes)
        mask[Int(cpu) / 8] |= UInt8(1 << (cpu % 8))
        let pinned = mask.withUnsafeMutableBytes { affinityCall("sched_setaffinity")(0, maskBytes, $0.baseAddress!) }
        precondition(pinned == 0, "sched_setaffinity failed: \(errno)")
    }

    /// On a new thread: pins itself to `runnerCPU`, starts a loop (its
    /// executor's threads made there), pins itself to `producerCPU`, then
    /// emits one event at a time, each once the last is reduced and after a
    /// 100 µs pause (the loop's thread has gone to sleep), until `enough`
    /// says so or 5,000 events. Returns the loop (to stop) and its pool.
    private static func sporadicRoundTrips(
        on executor: Executor, runnerCPU: Int32, producerCPU: Int32,
        until enough: @escaping @Sendable ((made: Int, leftOutOnWakerCore: Int)) -> Bool
    ) async throws -> (SpinLoop<Int, CounterEvent>, ReducerPool?) {
        let started: Result<(SpinLoop<Int, CounterEvent>, ReducerPool?), SpinExecutorError> = await onThread {
            pin(to: runnerCPU)
            let pool: ReducerPool?
            let loop: SpinLoop<Int, CounterEvent>
            do {
                pool = executor == .pool ? try ReducerPool(threads: 1, name: "idle-wait") : nil
                let options = SpinOptions(executor: pool.map { .pool($0) } ?? .dedicatedThread)
                loop = try Spin(initialState: 0, feedbacks: [], reducer: counterReducer).start(options: options)
            } catch let error as SpinExecutorError {
                return .failure(error)
            } catch {
                preconditionFailure("\(error)")
            }
            pin(to: producerCPU)
            var emitted = 0
            while emitted < 5_000, !enough(loop.idleWaits) {
                _ = loop.emit(.increment)
                emitted += 1
                while loop.state < emitted { usleep(10) }
                usleep(100)
            }
            return .success((loop, pool))
        }
        return try started.get()
    }

    @Test(arguments: Executor.allCases)
    func aRunnerWokenFromItsOwnCoreDoesNotWaitThereForTheNextEvent(executor: Executor) async throws {
        guard let cpu = Self.allowedCPUs().first else { return }
        // One core for the producer and the runner: every wake comes from
        // the runner's core. Its waits are left out there (the count shows
        // the wake's core reached the runner); without the rule, none is.
        let (loop, pool) = try await Self.sporadicRoundTrips(
            on: executor, runnerCPU: cpu, producerCPU: cpu, until: { $0.leftOutOnWakerCore >= 3 })
        let waits = loop.idleWaits
        await loop.stop()
        try await pool?.shutdown()
        #expect(waits.leftOutOnWakerCore >= 3, "waits made \(waits.made), left out \(waits.leftOutOnWakerCore)")
    }

    @Test(arguments: Executor.allCases)
    func aRunnerWokenFromAnotherCoreStillWaitsForTheNextEvent(executor: Executor) async throws {
        let cpus = Self.allowedCPUs()
        guard cpus.count >= 2 else { return }
        // The runner on one core, the producer on another: no wake comes
        // from the runner's core, so the waits are made as before (their
        // backoff lets one in 2, 4, … 64 through) and none is left out.
        let (loop, pool) = try await Self.sporadicRoundTrips(
            on: executor, runnerCPU: cpus[1], producerCPU: cpus[0], until: { $0.made >= 3 })
        let waits = loop.idleWaits
        await loop.stop()
        try await pool?.shutdown()
        #expect(waits.made >= 3, "waits made \(waits.made), left out \(waits.leftOutOnWakerCore)")
        #expect(waits.leftOutOnWakerCore == 0)
    }
}
#endif
