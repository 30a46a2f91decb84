import CSpindle
import Foundation
import Synchronization
import Testing
import SpindleTestSupport

/// The waiter's side of the protocol in spindle_parker.h: prepare, re-check, then
/// cancel or wait; loops because wait may return spuriously or time out.
/// `dawdle` CPU relax hints between the re-check and the wait widen the
/// window in which a notify lands after prepare but before the wait sleeps:
/// harmless by the protocol, fatal to an implementation that loses it.
/// Returns how many waits ran to (roughly) their full timeout, and false if
/// `deadline` passed before the condition held.
private func park(on parker: OpaquePointer, timeout: Duration, deadline: ContinuousClock.Instant,
                  dawdle: Int = 0, until condition: () -> Bool) -> (satisfied: Bool, timeouts: Int) {
    let timeoutNanoseconds = UInt64(timeout.components.seconds) * 1_000_000_000
        + UInt64(timeout.components.attoseconds / 1_000_000_000)
    var timeouts = 0
    while !condition() {
        let key = spindle_parker_prepare(parker)
        if condition() {
            spindle_parker_cancel(parker, key)
            break
        }
        for _ in 0..<dawdle { spindle_cpu_relax() }
        let start = ContinuousClock.now
        spindle_parker_wait(parker, key, timeoutNanoseconds)
        if ContinuousClock.now - start >= timeout * 0.9 { timeouts += 1 }
        if ContinuousClock.now > deadline { return (condition(), timeouts) }
    }
    return (true, timeouts)
}

/// A wait timeout (twice the hang guard) far beyond every time limit the
/// tests put on a wait, so a wait that ends within the limit was ended by a
/// notify.
private let farBeyondTheLimit: UInt64 = 2 * UInt64(hangGuardSeconds) * 1_000_000_000

/// How long one `spindle_parker_wait` slept, measured on its own thread.
final class WaitDuration: Sendable {
    let elapsed = Locked<Duration?>(nil)
}

/// Runs `spindle_parker_wait(parker, key, timeout)` on its own thread and
/// returns how long it slept, or nil when it still slept after `limitSeconds`
/// (a wait that ignores its timeout fails the test instead of hanging it;
/// the caller then leaks the parker, which that thread still uses).
private func timedWait(_ parker: OpaquePointer, key: UInt64, timeoutNanoseconds: UInt64,
                       limitSeconds: Int = Int(hangGuardSeconds)) -> Duration? {
    let shared = SharedHandle(raw: parker)
    let result = WaitDuration()
    let thread = TestThreads(1, name: "parker-timed") { _ in
        let start = ContinuousClock.now
        spindle_parker_wait(shared.raw, key, timeoutNanoseconds)
        let elapsed = ContinuousClock.now - start
        result.elapsed.withLock { $0 = elapsed }
    }
    guard thread.join(timeoutSeconds: limitSeconds) else { return nil }
    return result.elapsed.withLock { $0 }
}

/// State shared by the waiter threads and the notifying test thread.
final class WakeState: Sendable {
    let condition = Atomic<Bool>(false)
    /// Waiters about to call spindle_parker_wait for the first time.
    let aboutToSleep = Atomic<Int>(0)
}

/// Two threads passing a turn counter back and forth, each on its own parker.
final class PingPongState: Sendable {
    let turn = Atomic<Int>(0)
    let timeouts = Atomic<Int>(0)
    let completedRounds = Atomic<Int>(0)
}

extension CSpindleTarget {
    @Suite("spindle_parker: futex event count")
    struct ParkerTests {
        /// Cheap, counted rather than timed: with nobody registered a notify
        /// is one load and issues no wake (no system call).
        @Test func notifyWithNoWaiterIssuesNoWake() throws {
            let parker = try #require(spindle_parker_create())
            defer { spindle_parker_destroy(parker) }
            for _ in 0..<100_000 { spindle_parker_notify(parker) }
            #expect(spindle_parker_wake_count(parker) == 0)
        }

        /// A notify is not remembered: a waiter that prepares afterwards sleeps.
        @Test func notifyBeforePrepareDoesNotWakeALaterWaiter() throws {
            let parker = try #require(spindle_parker_create())
            spindle_parker_notify(parker)
            let key = spindle_parker_prepare(parker)
            let elapsed = try #require(timedWait(parker, key: key, timeoutNanoseconds: 50_000_000))
            spindle_parker_destroy(parker)
            #expect(elapsed >= .milliseconds(49))
        }

        /// The window the protocol closes: a notify between prepare and wait
        /// makes the wait return at once instead of sleeping.
        @Test func notifyBetweenPrepareAndWaitIsNotLost() throws {
            let parker = try #require(spindle_parker_create())
            let key = spindle_parker_prepare(parker)
            spindle_parker_notify(parker)
            // The wait's timeout is far beyond timedWait's 5 s limit, so a
            // wait that returns at all was ended by the notify: no margin
            // on the clock to lose on a busy machine.
            _ = try #require(timedWait(parker, key: key, timeoutNanoseconds: farBeyondTheLimit),
                             "the wait slept through the notify")
            spindle_parker_destroy(parker)
        }

        /// White-box: the key is the parker's round (and wake sequence), which
        /// a notify moves on only when a waiter is registered. After prepare + cancel nobody is, so
        /// a notify must leave the key unchanged (and cost one load).
        @Test func cancelWithdrawsThePreparedWaiter() throws {
            let parker = try #require(spindle_parker_create())
            let before = spindle_parker_prepare(parker)
            spindle_parker_cancel(parker, before)
            spindle_parker_notify(parker)
            let after = spindle_parker_prepare(parker)
            spindle_parker_cancel(parker, after)
            #expect(after == before)
            #expect(spindle_parker_wake_count(parker) == 0)

            // And the parker still works: a prepared waiter is notified (a
            // wait that returns before its far timeout was woken).
            let key = spindle_parker_prepare(parker)
            spindle_parker_notify(parker)
            _ = try #require(timedWait(parker, key: key, timeoutNanoseconds: farBeyondTheLimit),
                             "the wait slept through the notify")
            spindle_parker_destroy(parker)
        }

        @Test("wait returns after about the timeout", arguments: [1, 20, 100, 300])
        func waitTimesOut(milliseconds: Int) throws {
            let parker = try #require(spindle_parker_create())
            let key = spindle_parker_prepare(parker)
            let elapsed = try #require(timedWait(parker, key: key,
                                                 timeoutNanoseconds: UInt64(milliseconds) * 1_000_000))
            spindle_parker_destroy(parker)
            // No upper bound on a loaded machine: a wait that ignored its
            // timeout would still be asleep when timedWait gives up.
            #expect(elapsed >= .milliseconds(milliseconds) - .microseconds(500))
        }

        /// One notify wakes every sleeping waiter, from another thread.
        @Test("notify from another thread wakes sleeping waiters", arguments: [1, 3])
        func notifyWakesSleepingWaiters(waiters: Int) throws {
            let raw = try #require(spindle_parker_create())
            let parker = SharedHandle(raw: raw)
            let state = WakeState()
            let threads = TestThreads(waiters, name: "parker-waiter") { _ in
                var announced = false
                while !state.condition.load(ordering: .sequentiallyConsistent) {
                    let key = spindle_parker_prepare(parker.raw)
                    if state.condition.load(ordering: .sequentiallyConsistent) {
                        spindle_parker_cancel(parker.raw, key)
                        break
                    }
                    if !announced {
                        state.aboutToSleep.add(1, ordering: .relaxed)
                        announced = true
                    }
                    // Far beyond the join's limit: a waiter that the join
                    // sees end was woken by the notify, not by its timeout.
                    spindle_parker_wait(parker.raw, key, farBeyondTheLimit)
                }
            }
            // Let every waiter get into the futex before notifying. One that
            // is not asleep yet finds the round ended and returns at once
            // (the protocol's other path): the pause picks the path this test
            // usually takes, the checks hold on either.
            let readyDeadline = ContinuousClock.now + hangGuard  // ends as soon as they are ready
            while state.aboutToSleep.load(ordering: .relaxed) < waiters, ContinuousClock.now < readyDeadline {
                Thread.sleep(forTimeInterval: 0.001)
            }
            Thread.sleep(forTimeInterval: 0.05)

            state.condition.store(true, ordering: .sequentiallyConsistent)
            spindle_parker_notify(raw)
            let joined = threads.join()
            #expect(joined, "a waiter slept through the notify")
            guard joined else { return }  // leak: a waiter may still sleep on it
            spindle_parker_destroy(raw)
            #expect(state.aboutToSleep.load(ordering: .relaxed) == waiters, "every waiter went to sleep")
        }

        /// A sleeper takes ~13 us to get up after its wake; producers notify
        /// on every event meanwhile. Only the first notify may pay for a wake
        /// (a system call): the rest must find nobody registered. Notifiers
        /// on two threads storm one sleeping waiter; the parker must issue
        /// about one wake per sleep, not one per notify.
        @Test func notifyStormDuringOneSleepIssuesOneWake() throws {
            let raw = try #require(spindle_parker_create())
            let parker = SharedHandle(raw: raw)
            let state = WakeState()
            let sleeps = Atomic<Int>(0)
            let waiter = TestThreads(1, name: "parker-sleeper") { _ in
                let deadline = ContinuousClock.now + .seconds(10)
                while !state.condition.load(ordering: .sequentiallyConsistent), ContinuousClock.now < deadline {
                    let key = spindle_parker_prepare(parker.raw)
                    if state.condition.load(ordering: .sequentiallyConsistent) {
                        spindle_parker_cancel(parker.raw, key)
                        break
                    }
                    state.aboutToSleep.add(1, ordering: .relaxed)
                    sleeps.add(1, ordering: .relaxed)
                    spindle_parker_wait(parker.raw, key, 3_000_000_000)
                }
            }
            let readyDeadline = ContinuousClock.now + hangGuard  // ends as soon as they are ready
            while state.aboutToSleep.load(ordering: .relaxed) < 1, ContinuousClock.now < readyDeadline {
                Thread.sleep(forTimeInterval: 0.001)
            }
            Thread.sleep(forTimeInterval: 0.02)
            let notifiesPerThread = 20_000
            state.condition.store(true, ordering: .sequentiallyConsistent)
            let notifiers = TestThreads(2, name: "parker-storm") { _ in
                for _ in 0..<notifiesPerThread { spindle_parker_notify(parker.raw) }
            }
            #expect(notifiers.join())
            let joined = waiter.join()
            #expect(joined)
            guard joined else { return }  // leak: the waiter may still sleep on it
            let wakes = spindle_parker_wake_count(raw)
            let slept = sleeps.load(ordering: .relaxed)
            spindle_parker_destroy(raw)
            #expect(slept >= 1)
            // One wake per sleep at most (a sleep that timed out has none).
            #expect(wakes <= UInt64(slept), "\(wakes) wakes for \(slept) sleeps and \(2 * notifiesPerThread) notifies")
        }

        /// 10 000 hand-offs, each one a sleep/notify with no spinning first, so
        /// that every round runs the prepare / re-check / wait race, the waiter
        /// pausing a varying while before it waits. A lost wake-up costs the
        /// 100 ms timeout: the test counts those instead of hanging.
        @Test func pingPongLosesNoWakeUp() throws {
            let rounds = 10_000
            let timeout = Duration.milliseconds(100)
            let parkers = try [#require(spindle_parker_create()), #require(spindle_parker_create())]
            let shared = parkers.map { SharedHandle(raw: $0) }
            let state = PingPongState()
            // The hang guard, not a margin: even a parker that lost every
            // wake-up would end each wait at its timeout and go on.
            let deadline = ContinuousClock.now + hangGuard
            let threads = TestThreads(2, name: "ping-pong") { side in
                let mine = shared[side].raw
                let other = shared[1 - side].raw
                var timeouts = 0
                for round in 0..<rounds {
                    let myTurn = 2 * round + side
                    let waited = park(on: mine, timeout: timeout, deadline: deadline, dawdle: round % 128) {
                        state.turn.load(ordering: .sequentiallyConsistent) == myTurn
                    }
                    timeouts += waited.timeouts
                    guard waited.satisfied else { break }
                    state.turn.store(myTurn + 1, ordering: .sequentiallyConsistent)
                    spindle_parker_notify(other)
                    state.completedRounds.add(1, ordering: .relaxed)
                }
                state.timeouts.add(timeouts, ordering: .relaxed)
            }
            let joined = threads.join()
            #expect(joined)
            guard joined else { return }  // leak: a thread may still sleep on them
            for parker in parkers { spindle_parker_destroy(parker) }
            #expect(state.completedRounds.load(ordering: .relaxed) == 2 * rounds)
            let timeouts = state.timeouts.load(ordering: .relaxed)
            // A sound parker times out 0 of the 20 000 waits, even next to
            // three CPU hogs; one that drops a notify landing between prepare
            // and wait timed out 22 to 408 of them (a 1% bar would miss it).
            #expect(timeouts <= 5, "\(timeouts) waits timed out: lost wake-ups")
        }
    }
}
