import Dispatch
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport

extension StressSuite {
    /// Loops queued behind a long slice. A schedule wakes no sleeping pool
    /// thread while another thread searches the ready queue, counting on
    /// that one to find the loop. But a searcher takes one loop at a time:
    /// when two loops are scheduled during its search and the first one's
    /// slice is long (here its feedback waits until the second has run),
    /// the second must not wait for that slice while the pool's other
    /// thread sleeps. (A chain of `.block` loops hits the same race through
    /// bounded queues.)
    ///
    /// Each round emits to `waiter` and then at once to `target`, right
    /// after the previous round ended, while the threads still search. The
    /// waiter's feedback waits for the target's reduction (a generous 30 s
    /// bound only so that a failure ends the test). Checked: every round's
    /// wait ended by the target's reduction; every object is freed.
    @Suite("Loops queued behind a long slice")
    struct PoolQueuedBehindSliceStressTests {
        @Test("a loop queued behind a blocked slice runs on the pool's other thread",
              .timeLimit(.minutes(3)))
        func aLoopQueuedBehindABlockedSliceRunsOnTheOtherThread() async throws {
            let baseline = await LiveBaseline.settle()
            let rounds = max(2_000, StressScale.rounds * 100)
            let pool = try ReducerPool(threads: 2, name: "queued-behind")
            let (finished, stalled) = try await Self.run(rounds: rounds, on: pool)
            #expect(finished, "the rounds did not finish")
            #expect(stalled == 0, "a loop waited in the ready queue while the pool's other thread slept")
            try await pool.shutdown()
            await baseline.expectReturned()
        }

        /// Runs the rounds and stops both loops (released on return);
        /// answers whether the rounds finished and how many waits stalled.
        private static func run(rounds: Int, on pool: ReducerPool) async throws -> (Bool, Int) {
            let options = SpinOptions(executor: .pool(pool))
            let targetReduced = DispatchSemaphore(value: 0)
            let roundDone = DispatchSemaphore(value: 0)
            let stalled = Counter()

            let target = try Spin(initialState: 0) {
                Reducer<Int, Int> { state, _ in
                    targetReduced.signal()
                    return state + 1
                }
            }.start(options: options)
            let waiter = try Spin(initialState: 0) {
                // On the pool (the default placement), after each reduction:
                // the slice cannot end before the target has run.
                Feedback<Int, Int>(effect: { (state: Int) -> Int? in
                    guard state > 0 else { return nil }
                    if targetReduced.wait(timeout: .now() + .seconds(30)) == .timedOut { stalled.add() }
                    roundDone.signal()
                    return nil
                })
                Reducer<Int, Int> { state, _ in state + 1 }
            }.start(options: options)

            let finished = await onThreads(1) { _ in
                for round in 0..<rounds {
                    _ = waiter.emit(round)
                    _ = target.emit(round)
                    roundDone.wait()
                    if stalled.current > 0 { return }
                }
            }
            await waiter.stop()
            await target.stop()
            return (finished, stalled.current)
        }
    }
}
