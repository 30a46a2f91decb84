/// What the engine needs from an event queue: many producers, one consumer
/// (the loop's reducer thread).
///
/// Implementations: ``LockFreeQueue`` (liburcu wfcqueue), ``RingQueue``
/// (bounded C ring) and ``BaselineQueue`` (pure Swift, for comparison). The
/// ring's bounded-only members (capacity, depth, the space parker) are its own.
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
}
