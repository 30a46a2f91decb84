internal import Atomics
internal import CSpindle

/// A loop's states as an `AsyncSequence`: the state current when the
/// sequence was made first, then every new state in reduction order; it
/// ends after the final state when the loop stops. See ``SpinLoop/states``.
///
/// One subscription per sequence: its iterators share it (each state goes
/// to one `next()`), so iterate it from one task, as an `AsyncStream`.
/// Dropping the sequence and its iterators, or cancelling the task that
/// waits in `next()`, ends the subscription.
///
/// **Waiting.** When no state is buffered, `next()` suspends at once: it
/// never spins on its thread (which may be the main actor's, or one of the
/// few cooperative threads other tasks need). The runner resumes it with the
/// next state.
///
/// **Buffering.** A subscription keeps at most
/// ``BufferingPolicy/standard`` (4,096) states waiting by default: a
/// consumer that falls further behind loses the oldest waiting states, and
/// always gets to the latest state (and the final one), in order, so memory
/// stays bounded whatever the consumer does. ``BufferingPolicy/latest``
/// conflates harder (what a renderer wants); ``BufferingPolicy/unbounded``
/// keeps every state, and a consumer that lags for good makes its buffer
/// grow without bound.
///
/// **Thread safety:** `Sendable`; each iterator belongs to the task that
/// iterates it, as any `AsyncIteratorProtocol` value.
public struct SpinStates<State: Sendable>: AsyncSequence, Sendable {
    public typealias Element = State
    public typealias Failure = Never

    /// What a subscription keeps while its consumer lags.
    public enum BufferingPolicy: Sendable, Hashable {
        /// Every state, in order, buffered without bound: a consumer that
        /// lags for good makes the buffer grow without bound.
        case unbounded
        /// At most `limit` states wait; when a new one arrives beyond that,
        /// the oldest waiting ones are dropped. The latest state (and, at
        /// the end, the final state) is never dropped, and the states taken
        /// stay in reduction order, with gaps. A `limit` below 1 counts
        /// as 1.
        case bufferingNewest(Int)

        /// Only the latest state waits (`bufferingNewest(1)`): conflation
        /// for a renderer, which draws the latest state and skips the rest.
        /// A waiting consumer is given the last state of each batch the
        /// loop reduced, never one in between; and while every subscriber
        /// of a loop keeps only the latest state, the loop does not collect
        /// the states in between either (a flooded loop runs as fast as an
        /// unobserved one, less one hand-over per batch).
        public static var latest: Self { .bufferingNewest(1) }

        /// The default: `bufferingNewest(4096)`. A consumer that keeps up
        /// (or lags by less) sees every state; one that lags further loses
        /// the oldest waiting states, never the latest or the final one, and
        /// its buffer never holds more than 4,096 states.
        public static var standard: Self { .bufferingNewest(4096) }

        /// The most states that may wait.
        package var limit: Int {
            switch self {
            case .unbounded: return .max
            case .bufferingNewest(let limit): return Swift.max(limit, 1)
            }
        }
    }

    let handle: StateSubscriptionHandle<State>

    init(_ subscription: StateSubscription<State>) {
        handle = StateSubscriptionHandle(subscription)
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(handle: handle)
    }

    /// Takes the subscription's states in order.
    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = State
        public typealias Failure = Never

        let handle: StateSubscriptionHandle<State>

        /// The next state, or nil once the loop has stopped (after its final
        /// state) or the waiting task was cancelled.
        public mutating func next() async -> State? {
            await handle.subscription.next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> State? {
            await handle.subscription.next(isolation: actor)
        }
    }
}

/// Ends its subscription when the last sequence or iterator holding it goes
/// away (the observers keep the subscription itself).
final class StateSubscriptionHandle<State: Sendable>: Sendable {
    let subscription: StateSubscription<State>

    init(_ subscription: StateSubscription<State>) {
        self.subscription = subscription
    }

    deinit {
        subscription.end(cancelled: true)
    }
}

/// One subscriber's buffer of states: filled by the loop's runner in
/// batches, taken by `next()`.
///
/// Thread safety: `append`/`end` from the runner (or a stopping thread),
/// `next` from the consuming task; the buffer is under `storage`'s lock.
/// No lock is held while a waiter is resumed.
final class StateSubscription<State: Sendable>: Sendable {
    /// `@unchecked Sendable`: its `latestSlot` pointer is only dereferenced
    /// under the subscription's lock, like the rest of the storage.
    private struct Storage: @unchecked Sendable {
        var states: [State] = []
        /// The next state to take in `states` (taken and dropped ones stay
        /// until the buffer empties or they are half of it, so taking never
        /// shifts the array and dropping shifts it at most once per `limit`
        /// states).
        var head = 0
        /// The most states that may wait (see `SpinStates.BufferingPolicy`).
        let limit: Int
        /// Suspended `next()` calls, oldest first (one, unless the caller
        /// iterates from several tasks at once).
        var waiters: [UnsafeContinuation<State?, Never>] = [] {
            didSet { hasWaiters = !waiters.isEmpty }
        }
        /// `!waiters.isEmpty`, read without the array (whose element type
        /// the runtime would look up on every `append`).
        private(set) var hasWaiters = false
        var ended = false
        /// Called once when the subscriber leaves before the loop ends (the
        /// observers then forget it); nil once called or once ended.
        var onCancel: (@Sendable () -> Void)?
        /// Under `.latest` (a limit of one) the waiting state is here, not
        /// in `states`: replacing it is a plain store, where the array's
        /// operations would look up its generic metadata on each slice
        /// (this code is unspecialized). Initialized while `hasLatest`.
        /// Raw: an optional typed pointer is a generic type too.
        let latestSlot: UnsafeMutableRawPointer?
        var hasLatest = false

        init(limit: Int, onCancel: @escaping @Sendable () -> Void) {
            self.limit = limit
            self.onCancel = onCancel
            latestSlot = limit == 1
                ? .allocate(byteCount: MemoryLayout<State>.size, alignment: MemoryLayout<State>.alignment) : nil
        }

        var bufferedCount: Int { latestSlot != nil ? (hasLatest ? 1 : 0) : states.count - head }

        var hasBuffered: Bool { bufferedCount > 0 }

        /// Drops what waits (a subscriber that left).
        mutating func dropBuffered() {
            states = []
            head = 0
            if let latestSlot, hasLatest {
                latestSlot.assumingMemoryBound(to: State.self).deinitialize(count: 1)
                hasLatest = false
            }
        }

        /// Frees the `.latest` slot (the subscription's end of life).
        mutating func free() {
            dropBuffered()
            latestSlot?.deallocate()
        }

        /// Buffers `states[from...]` (under a limit, only the newest `limit`
        /// can stay) unless a `next()` waits for one; nothing once ended.
        /// Whether it is done with them.
        mutating func bufferUnlessAwaited(_ states: UnsafeBufferPointer<State>, from index: Int) -> Bool {
            if ended { return true }
            guard !hasWaiters else { return false }
            guard index < states.count else { return true }
            if let latestSlot {
                let latest = latestSlot.assumingMemoryBound(to: State.self)
                if hasLatest {
                    latest.pointee = states[states.count - 1]
                } else {
                    latest.initialize(to: states[states.count - 1])
                    hasLatest = true
                }
                return true
            }
            // Element by element: `append(contentsOf:)` of a slice looks up
            // the slice's generic metadata in this unspecialized code.
            for position in Swift.max(index, states.count - limit)..<states.count {
                self.states.append(states[position])
            }
            dropBeyondLimit()
            return true
        }

        /// Drops the oldest waiting states beyond `limit`.
        mutating func dropBeyondLimit() {
            let excess = states.count - head - limit
            guard excess > 0 else { return }
            head += excess
            if head >= states.count / 2 {
                states.removeSubrange(0..<head)
                head = 0
            }
        }

        mutating func takeBuffered() -> State {
            if let latestSlot {
                hasLatest = false
                return latestSlot.assumingMemoryBound(to: State.self).move()
            }
            let state = states[head]
            head += 1
            if head == states.count {
                states.removeAll(keepingCapacity: true)
                head = 0
            }
            return state
        }
    }

    // protected by lock
    private let storage: Lock<Storage>

    init(limit: Int = .max, onCancel: @escaping @Sendable () -> Void) {
        storage = Lock(Storage(limit: limit, onCancel: onCancel))
        LiveCounts.stateSubscriptions.wrappingIncrement(ordering: .relaxed)
    }

    deinit {
        storage.withLock { $0.free() }
        LiveCounts.stateSubscriptions.wrappingDecrement(ordering: .relaxed)
    }

    /// Adds states in order; hands the first ones to waiting `next()` calls.
    func append(_ states: UnsafeBufferPointer<State>) {
        guard !states.isEmpty else { return }
        // The usual call on a busy loop: no `next()` waits (the subscriber
        // is still at an earlier state), the states are only buffered. Apart
        // from the hand-over, whose locals (tuples and optionals of the
        // state) are generic types the runtime looks up on every call of
        // this unspecialized code: a lookup per slice otherwise.
        if storage.withLock({ $0.bufferUnlessAwaited(states, from: 0) }) { return }
        handOver(states)
    }

    /// `append` when a `next()` waits: the first states go to the waiters.
    @inline(never)
    private func handOver(_ states: UnsafeBufferPointer<State>) {
        // The usual waiter is one task; more (a sequence iterated from
        // several tasks at once) take the rare path.
        var first: (UnsafeContinuation<State?, Never>, State)?
        var more: [(UnsafeContinuation<State?, Never>, State)] = []
        storage.withLock { storage in
            var index = 0
            while !storage.waiters.isEmpty, index < states.count {
                let waiter = (storage.waiters.removeFirst(), states[index])
                if first == nil { first = waiter } else { more.append(waiter) }
                index += 1
            }
            _ = storage.bufferUnlessAwaited(states, from: index)
        }
        if let (waiter, state) = first { waiter.resume(returning: state) }
        for (waiter, state) in more { waiter.resume(returning: state) }
    }

    /// States buffered, not yet taken. Any thread.
    var bufferedCount: Int {
        storage.withLock { $0.bufferedCount }
    }

    /// Adds one state; see `append(_:)`.
    func append(_ state: State) {
        withUnsafePointer(to: state) { append(UnsafeBufferPointer(start: $0, count: 1)) }
    }

    /// Ends the subscription: `next()` returns what is buffered, then nil.
    /// `cancelled`: the subscriber left (its buffer is dropped, and the
    /// observers are told); otherwise the loop stopped.
    func end(cancelled: Bool) {
        let (waiters, onCancel) = storage.withLock { storage -> ([UnsafeContinuation<State?, Never>], (@Sendable () -> Void)?) in
            if storage.ended { return ([], nil) }
            storage.ended = true
            if cancelled { storage.dropBuffered() }
            defer {
                storage.waiters = []
                storage.onCancel = nil
            }
            return (storage.waiters, cancelled ? storage.onCancel : nil)
        }
        for waiter in waiters { waiter.resume(returning: nil) }
        onCancel?()
    }

    func next(isolation actor: isolated (any Actor)?) async -> State? {
        if Task.isCancelled {
            end(cancelled: true)
            return nil
        }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation(isolation: actor) { (continuation: UnsafeContinuation<State?, Never>) in
                let ready: (State?)? = storage.withLock { storage in
                    if storage.hasBuffered { return .some(storage.takeBuffered()) }
                    if storage.ended { return .some(nil) }
                    storage.waiters.append(continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            end(cancelled: true)
        }
    }
}
