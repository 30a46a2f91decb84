/// How long a thread with nothing to do polls before it sleeps: the parking
/// policy of a pool thread and of a dedicated thread, each in its own unit
/// (nanoseconds of polling, CPU pauses).
///
/// A trade-off between CPU burnt while idle and the latency of the next
/// event: waking a sleeping thread costs its waker a system call and the
/// event ~10–15 µs; polling costs a core. So the budget adapts:
/// - a thread woken soon after it slept (within `shortSleepNanoseconds`)
///   doubles its budget, from `first`, up to `maximum`: work comes back at
///   that rhythm (a closed loop: emit, see the state, emit again), so the
///   next time it will still be polling;
/// - a thread that slept longer halves it, and drops it once it is at
///   `first` or below: one long sleep at a time, so that a burst of events
///   after a long pause (a timer's round of many loops) keeps most of its
///   budget, while a loop fed every 100 µs or every millisecond, or an idle
///   process, soon has a thread that sleeps as soon as its work ends.
///
/// Polling that has nothing to catch costs more than CPU: a thread woken
/// for a sporadic event often runs on its waker's core, and while it polls
/// there, the waker (often the very thread waiting for the loop's state)
/// cannot run. On a crowded machine that can last: the kernel keeps the
/// poller and its producer on one core (other work holds the other), the
/// producer runs only once the poll has timed out and the poller sleeps,
/// wakes it at once — a short sleep, which would double the budget — and
/// every round trip costs a whole poll. So a thread woken from the very
/// core it slept on stops polling (`slept(nanoseconds:onCore:wokenFromCore:)`):
/// there, its polling only kept its waker off the core.
struct AdaptiveSpin {
    /// A sleep shorter than this says work comes back at that rhythm.
    static let shortSleepNanoseconds: UInt64 = 64_000

    /// The budget a thread starts from after it stopped polling.
    let first: UInt64
    /// The most a thread polls.
    let maximum: UInt64
    /// How long to poll before the next sleep (0: sleep at once).
    private(set) var budget: UInt64

    init(first: UInt64, maximum: UInt64, budget: UInt64) {
        self.first = first
        self.maximum = maximum
        self.budget = budget
    }

    /// Adapts the budget to a sleep that lasted `nanoseconds`, on core
    /// `onCore`, ended by a wake made on `wokenFromCore` (-1 for either:
    /// unknown, or no wake). A wake from the core the thread slept on drops
    /// the budget to nothing, whatever the sleep's length; any other sleep
    /// adapts it by its length.
    mutating func slept(nanoseconds: UInt64, onCore: Int32, wokenFromCore: Int32) {
        if onCore >= 0, wokenFromCore == onCore {
            budget = 0
        } else {
            slept(nanoseconds: nanoseconds)
        }
    }

    /// Adapts the budget to a sleep that lasted `nanoseconds`.
    mutating func slept(nanoseconds: UInt64) {
        budget = nanoseconds < Self.shortSleepNanoseconds
            ? Swift.min(Swift.max(budget &* 2, first), maximum)
            : budget <= first ? 0 : budget / 2
    }
}
