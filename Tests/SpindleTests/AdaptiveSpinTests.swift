@testable import Spindle
import Testing

// The parking policy shared by pool threads and dedicated threads: budgets
// after sequences of short and long sleeps (pure arithmetic, no clock).

@Suite struct AdaptiveSpinTests {
    private static let short: UInt64 = AdaptiveSpin.shortSleepNanoseconds - 1
    private static let long: UInt64 = AdaptiveSpin.shortSleepNanoseconds

    private func budgets(_ spin: AdaptiveSpin, after sleeps: [UInt64]) -> [UInt64] {
        var spin = spin
        return sleeps.map { sleep in
            spin.slept(nanoseconds: sleep)
            return spin.budget
        }
    }

    @Test func aPoolThreadDoublesToItsMaximumAndDropsToNothingOneLongSleepAtATime() {
        let doubling = budgets(PoolCore.parkingPolicy(), after: Array(repeating: Self.short, count: 8))
        #expect(doubling == [2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 64_000, 64_000])
        var polling = PoolCore.parkingPolicy()
        for _ in 0..<6 { polling.slept(nanoseconds: Self.short) }
        let halving = budgets(polling, after: Array(repeating: Self.long, count: 8))
        #expect(halving == [32_000, 16_000, 8_000, 4_000, 2_000, 1_000, 0, 0])
    }

    @Test func aThreadThatStoppedPollingStartsAgainFromTheFirstBudget() {
        var spin = PoolCore.parkingPolicy()
        spin.slept(nanoseconds: Self.long)
        #expect(spin.budget == 0)
        spin.slept(nanoseconds: Self.short)
        #expect(spin.budget == 1_000)
    }

    @Test func aBurstAfterOneLongPauseKeepsHalfItsBudget() {
        var spin = PoolCore.parkingPolicy()
        for _ in 0..<6 { spin.slept(nanoseconds: Self.short) }
        #expect(budgets(spin, after: [Self.long, Self.short]) == [32_000, 64_000])
    }

    /// Budgets after sleeps on core 1, each ended by a wake from the
    /// sleeper's own core or from core 0.
    private func budgets(_ spin: AdaptiveSpin, after sleeps: [(nanoseconds: UInt64, ownCore: Bool)]) -> [UInt64] {
        var spin = spin
        return sleeps.map { sleep in
            spin.slept(nanoseconds: sleep.nanoseconds, onCore: 1, wokenFromCore: sleep.ownCore ? 1 : 0)
            return spin.budget
        }
    }

    @Test func aThreadWokenFromTheCoreItSleptOnStopsPollingWhateverTheSleep() {
        // The crowded machine's trap: the poller and its producer share a
        // core, the producer runs only once the poll has timed out and
        // wakes the poller at once. A short sleep would double the budget;
        // a wake from the poller's own core drops it, and wakes from
        // another core (the kernel moved one of them) grow it back from
        // the first budget.
        var polling = PoolCore.parkingPolicy()
        for _ in 0..<6 { polling.slept(nanoseconds: Self.short) }
        #expect(polling.budget == 64_000)
        #expect(budgets(polling, after: [(Self.short, true), (Self.short, true), (Self.short, false), (Self.short, false)])
            == [0, 0, 1_000, 2_000])
        #expect(budgets(polling, after: [(Self.long, true)]) == [0])
        // From another core, the sleep's length decides, as before.
        #expect(budgets(polling, after: [(Self.short, false), (Self.long, false)]) == [64_000, 32_000])
        // A core nobody knows (-1, off Linux, or no wake) is never "its own".
        var unknown = polling
        unknown.slept(nanoseconds: Self.short, onCore: -1, wokenFromCore: -1)
        #expect(unknown.budget == 64_000)
    }

    @Test func aDedicatedThreadsSpinStaysUnderItsCap() {
        // spinsBeforeParking 2000, first 256: as DedicatedThreadExecutor makes it.
        let spin = AdaptiveSpin(first: 256, maximum: 2_000, budget: 2_000)
        #expect(budgets(spin, after: [Self.long, Self.long, Self.long, Self.long]) == [1_000, 500, 250, 0])
        #expect(budgets(spin, after: [Self.short]) == [2_000])
        let stopped = AdaptiveSpin(first: 256, maximum: 2_000, budget: 0)
        #expect(budgets(stopped, after: [Self.short, Self.short, Self.short, Self.short]) == [256, 512, 1_024, 2_000])
    }
}
