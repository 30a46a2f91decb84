internal import Atomics

/// A gate on a loop's reductions, for a consumer with demand (SpindleCombine's
/// `stream(from:)`, whose Combine subscriber asks for states): while the gate
/// is closed, the loop reduces nothing and its events wait in its queue; each
/// reduction's state is handed to ``deliver`` on the runner, once the loop's
/// feedbacks have been handed it and before the next event is reduced.
///
/// The protocol (`Model/PROTOCOL.md`, "The reduction gate"): any thread opens
/// the gate (``open()``, a sequentially consistent store) and then wakes the
/// loop (`SpinLoop.wakeForGate()`): the Dekker pair with the runner's idle
/// store and re-check, as for an emit. The runner closes it, from
/// ``deliver`` (the consumer's demand ran out); so may a consumer that is
/// about to stop the loop (a cancelled subscription). A gated loop reduces one
/// event per slice, so that no state is reduced past the demand the gate
/// showed. A requested stop opens the gate for good: a drain reduces every
/// accepted event (their states reach ``deliver`` beyond the demand).
///
/// **Thread safety:** `Sendable`; ``deliver`` and ``finished`` are called on
/// the loop's runner, one call at a time.
package final class ReductionGate<State: Sendable>: Sendable {
    private let openFlag = ManagedAtomic<Bool>(false)
    /// Each reduced state, in order, on the runner, after the feedbacks
    /// were handed it. May close the gate.
    let deliver: @Sendable (State) -> Void
    /// Once, on the runner, as the loop finishes: after the last
    /// ``deliver``, before its stop completes.
    let finished: @Sendable () -> Void

    package init(deliver: @escaping @Sendable (State) -> Void, finished: @escaping @Sendable () -> Void) {
        self.deliver = deliver
        self.finished = finished
    }

    /// Opens the gate. Any thread; wake the loop after it.
    package func open() {
        openFlag.store(true, ordering: .sequentiallyConsistent)
    }

    /// Closes the gate: the runner (from ``deliver``), or any thread when
    /// a stop of the loop follows (closing hides queued events from the
    /// runner; only a stop or an ``open()`` and a wake shows them again).
    package func close() {
        openFlag.store(false, ordering: .sequentiallyConsistent)
    }

    /// Whether the gate is open (relaxed: the runner's idle re-check reads it
    /// after its fence).
    var isOpen: Bool { openFlag.load(ordering: .relaxed) }
}
