import Spindle

/// The engines compared side by side: the same loop on each event queue.
enum Engine: String, CaseIterable, Sendable {
    /// liburcu's wait-free concurrent queue with pooled nodes (`.lockFree`).
    case lockfree
    /// The bounded C ring (`.bounded(capacity:overflow: .block)`).
    case ring
    /// The pure-Swift comparison queue, a lock around a `Deque` (`.baseline`).
    case baseline

    /// The loop's queue for this engine; `ringCapacity` applies to `ring`.
    func queue(ringCapacity: Int) -> QueueKind {
        switch self {
        case .lockfree: .lockFree
        case .ring: .bounded(capacity: ringCapacity, overflow: .block)
        case .baseline: .baseline
        }
    }

    /// One line for `--help`.
    var summary: String {
        switch self {
        case .lockfree: ".lockFree: liburcu wfcqueue, pooled nodes, batch splice"
        case .ring: ".bounded(capacity: 65536, overflow: .block): the C ring"
        case .baseline: ".baseline: pure Swift, a lock around a Deque"
        }
    }
}
