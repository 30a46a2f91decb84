extension Spin {
    /// The spin as an `AsyncSequence` of states: iterating it starts a loop
    /// and yields that loop's states; ending the iteration stops it.
    ///
    /// @Snippet(path: "Spindle/Snippets/Spindle/AsyncAwait", slice: "stream")
    ///
    /// Each iterator starts its own loop on its first `next()`, and yields
    /// the initial state first, then every new state in reduction order (as
    /// ``SpinLoop/states(bufferingPolicy:)``, kept as `bufferingPolicy` says
    /// while the consumer lags: by default at most 4,096 states wait, and a
    /// consumer that lags further skips the oldest, never the latest or the
    /// final one). When the task is cancelled, `next()` stops the
    /// loop (drain), waits for the stop, and returns nil. When the iterator
    /// goes away early (a `break`), the loop is released, and it stops in
    /// the background (drain).
    ///
    /// - Parameters:
    ///   - options: the options of each loop started.
    ///   - bufferingPolicy: what to keep while the consumer lags.
    /// - Returns: a sequence; nothing runs until it is iterated.
    public func stream(
        options: SpinOptions = .init(),
        bufferingPolicy: SpinStates<State>.BufferingPolicy = .standard
    ) -> SpinStream<State, Event> {
        SpinStream(spin: self, options: options, bufferingPolicy: bufferingPolicy)
    }

    /// Runs the spin until the task is cancelled.
    ///
    /// @Snippet(path: "Spindle/Snippets/Spindle/AsyncAwait", slice: "run")
    ///
    /// > Important: `run()` never returns normally. Once the task is
    /// > cancelled, it stops the loop (drain: every accepted event is
    /// > reduced, then every effect is cancelled), waits for the stop, and
    /// > throws `CancellationError`. Called in an already cancelled task, it
    /// > starts the loop, stops it, and throws at once.
    ///
    /// - Parameters:
    ///   - options: the loop's options.
    ///   - onStart: called with the loop right after it starts (to emit into
    ///     it, or to keep it for reading); the loop stops when `run` ends,
    ///     whoever else holds it.
    /// - Throws: the ``SpinExecutorError`` of a loop that cannot start (at
    ///   once; `onStart` is not called); otherwise `CancellationError`,
    ///   always, after the loop has stopped.
    public func run(
        options: SpinOptions = .init(),
        onStart: @Sendable (SpinLoop<State, Event>) -> Void = { _ in }
    ) async throws {
        let loop = try start(options: options)
        onStart(loop)
        let cancellation = CancellationSignal()
        await withTaskCancellationHandler {
            await cancellation.wait()
        } onCancel: {
            cancellation.fire()
        }
        await loop.stop()
        throw CancellationError()
    }
}

/// An `AsyncSequence` of a spin's states; see ``Spin/stream(options:bufferingPolicy:)``.
///
/// **Thread safety:** the sequence is `Sendable`; each iterator belongs to
/// the task that iterates it, as any `AsyncIteratorProtocol` value.
public struct SpinStream<State: Sendable, Event: Sendable>: AsyncSequence, Sendable {
    public typealias Element = State
    public typealias Failure = Never

    let spin: Spin<State, Event>
    let options: SpinOptions
    let bufferingPolicy: SpinStates<State>.BufferingPolicy

    public func makeAsyncIterator() -> Iterator {
        Iterator(spin: spin, options: options, bufferingPolicy: bufferingPolicy)
    }

    /// Starts the loop on the first `next()`; see ``Spin/stream(options:bufferingPolicy:)``.
    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = State
        public typealias Failure = Never

        let spin: Spin<State, Event>
        let options: SpinOptions
        let bufferingPolicy: SpinStates<State>.BufferingPolicy
        /// The running loop; nil before the first `next()` and once ended.
        /// Dropping the last copy releases the loop, which then stops.
        private var loop: SpinLoop<State, Event>?
        private var states: SpinStates<State>.Iterator?
        private var ended = false

        init(spin: Spin<State, Event>, options: SpinOptions, bufferingPolicy: SpinStates<State>.BufferingPolicy) {
            self.spin = spin
            self.options = options
            self.bufferingPolicy = bufferingPolicy
        }

        /// The next state: the initial one first (starting the loop), then
        /// every new one; nil once the task is cancelled (the loop has
        /// stopped then).
        public mutating func next() async -> State? {
            await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> State? {
            if ended { return nil }
            if loop == nil {
                // Subscribed before the loop runs: the initial state first.
                let started = SpinLoop.startObserved(spin: spin, options: options, bufferingPolicy: bufferingPolicy)
                loop = started.loop
                states = started.states.makeAsyncIterator()
            }
            if let state = await states?.next(isolation: actor) { return state }
            // Cancelled (the loop only stops through this iterator).
            ended = true
            states = nil
            if let loop {
                self.loop = nil
                await loop.stop()
            }
            return nil
        }
    }
}

/// Resumes `wait()` once `fire()` has been called, whichever comes first.
private final class CancellationSignal: Sendable {
    private struct Storage {
        var fired = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    // protected by lock
    private let storage = Lock(Storage())

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = storage.withLock { storage -> Bool in
                if storage.fired { return true }
                storage.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func fire() {
        let waiter = storage.withLock { storage -> CheckedContinuation<Void, Never>? in
            storage.fired = true
            defer { storage.waiter = nil }
            return storage.waiter
        }
        waiter?.resume()
    }
}
