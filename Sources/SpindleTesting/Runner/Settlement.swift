/// How ``TestSpin/runUntilIdle(timeout:)`` (and ``TestFeedback``'s) ended.
///
/// **Thread safety:** a value type; `Sendable`.
public enum Settlement: Sendable, Hashable, CustomStringConvertible {
    /// Nothing more happens until the test acts: no job is queued, no event
    /// is pending, and every run still in flight waits on a ``TestClock`` or
    /// (stream form) for the next state.
    case settled
    /// Idle for now, but these runs wait on something outside the runner's
    /// control (real I/O, a real timer, another thread or actor), so more
    /// may happen without the test.
    case waiting(on: [TestEffectRun])
    /// The runner reduced this many events without becoming idle (a loop
    /// that never stops emitting) and gave up.
    case stepLimitReached(Int)

    /// True for ``settled``.
    public var isSettled: Bool { self == .settled }

    public var description: String {
        switch self {
        case .settled: "settled"
        case .waiting(let runs): "waiting on \(runs.map(\.description).joined(separator: ", "))"
        case .stepLimitReached(let steps): "step limit reached after \(steps) events"
        }
    }
}
