/// What the engine needs from an event queue: many producers, one consumer
/// (the loop's reducer thread).
///
/// Implementations: ``RingQueue`` (bounded C ring) and ``BaselineQueue``
/// (pure Swift, the benchmark's yardstick). The ring's bounded-only members
/// (capacity, depth, the space parker) are its own. The default queue,
/// ``LockFreeQueue`` (liburcu wfcqueue), does not conform: it is a value,
/// a typed handle over one non-generic storage for every loop, not an
/// object, and `LoopCore` reaches each kind through `QueueTag`, not through
/// this protocol.
protocol EventQueue<Event>: AnyObject, Sendable {
    associatedtype Event: Sendable

    /// Tries to append `event`. Any thread.
    /// - Returns: `true` when enqueued, `false` when a bounded queue is full.
    func tryEnqueue(_ event: Event) -> Bool

    /// Hands up to `max` events, in order per producer, to `body` by address:
    /// `body` must move (or deinitialize) the `Event` at the pointer, which
    /// the queue then treats as uninitialized. Reducer thread only.
    ///
    /// By address, not by value: the reducer moves the event straight out of
    /// the queue's memory in code specialized for the concrete type (see
    /// `Reducer.reduceInPlace`), instead of a value-witness copy here.
    /// - Returns: how many events were handed out.
    /// - Complexity: O(n) in the events handed out.
    func drain(max: Int, _ body: (UnsafeMutableRawPointer) -> Void) -> Int

    /// True when nothing is waiting. Reducer thread only (exact there).
    var isEmpty: Bool { get }
}
