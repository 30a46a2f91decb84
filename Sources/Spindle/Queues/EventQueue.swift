/// What the engine needs from an event queue: many producers, one consumer
/// (the loop's reducer thread).
///
/// Implementations: ``LockFreeQueue`` (liburcu wfcqueue), ``RingQueue``
/// (bounded C ring) and ``BaselineQueue`` (pure Swift, for comparison).
protocol EventQueue<Event>: AnyObject, Sendable {
    associatedtype Event: Sendable

    /// Tries to append `event`. Any thread.
    /// - Returns: `true` when enqueued, `false` when a bounded queue is full.
    func tryEnqueue(_ event: Event) -> Bool

    /// Moves up to `max` events out, in order per producer, and hands each to
    /// `body`. Reducer thread only.
    /// - Returns: how many events were handed out.
    /// - Complexity: O(n) in the events handed out.
    func drain(max: Int, _ body: (consuming Event) -> Void) -> Int

    /// True when nothing is waiting. Reducer thread only (exact there).
    var isEmpty: Bool { get }

    /// Events waiting (approximate under concurrency). The lock-free queue
    /// cannot count without a shared counter on its hot path, so it reports
    /// only 0 (empty) or 1 (non-empty).
    var depth: Int { get }

    /// The most events the queue holds (`Int.max` when unbounded).
    var capacity: Int { get }

    /// The parker that blocked producers wait on for space, if bounded.
    var spaceParker: Parker? { get }
}
