#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Spindle

extension AnyPublisher where Failure == Never, Output: Sendable {
    /// A publisher of a spin's states (Spin.Swift's start operator): each
    /// subscription starts a loop, and cancelling it stops that loop.
    ///
    /// @Snippet(path: "Spindle/Snippets/SpindleCombine/CombineStartOperators", slice: "stream")
    ///
    /// As Spin.Swift's, the stream publishes the reduced states only (the
    /// feedbacks see the initial state; the subscriber does not) and moves
    /// with its subscriber's demand:
    /// - The loop reduces an event only while the subscriber has demand;
    ///   otherwise its events wait in its queue (no state is buffered, and
    ///   the loop does not run ahead).
    /// - Each state is handed to the loop's feedbacks, then sent to the
    ///   subscriber, on the loop's executor, before the next event is
    ///   reduced: a subscriber that ends the stream in `receive(_:)`
    ///   (`prefix`, `output(in:)`, `first`) stops the loop at that state.
    ///   Keep `receive(_:)` quick: the loop waits for it.
    /// - A stop that drains (the loop's pool shutting down) reduces every
    ///   accepted event whatever the demand: those states wait, as
    ///   `bufferingPolicy` says, until the subscriber asks for them, and the
    ///   completion follows them.
    ///
    /// > Important: Cancelling the subscription tears its loop down at once,
    /// > as Combine tears a chain down: it sends nothing more, no state
    /// > reaches the loop's feedbacks after `cancel()` returns (bar an effect
    /// > call already in progress), the events not yet reduced are dropped
    /// > (`StopMode.discardPending`), every effect is cancelled, and the
    /// > loop finishes in the background. The publisher never fails, and
    /// > completes only if its loop stops some other way.
    ///
    /// - Parameters:
    ///   - spin: the spin to run, once per subscription.
    ///   - options: the options of each loop started (a loop reduces one
    ///     event per slice, whatever `maxBatch` says).
    ///   - bufferingPolicy: what to keep of the states a draining stop
    ///     reduces beyond the subscriber's demand.
    /// - Returns: a publisher; nothing runs until it is subscribed to.
    public static func stream<Event: Sendable>(
        from spin: Spin<Output, Event>,
        options: SpinOptions = .init(),
        bufferingPolicy: SpinStates<Output>.BufferingPolicy = .standard
    ) -> AnyPublisher<Output, Never> {
        SpinPublisher(spin: spin, options: options, bufferingPolicy: bufferingPolicy).eraseToAnyPublisher()
    }

    /// Starts a loop running `spin` and returns a cancellable that stops it
    /// (Spin.Swift's `start(spin:)`).
    ///
    /// @Snippet(path: "Spindle/Snippets/SpindleCombine/CombineStartOperators", slice: "start")
    ///
    /// > Important: Cancelling, or releasing the cancellable, tears the loop
    /// > down at once, as cancelling ``stream(from:options:bufferingPolicy:)``'s
    /// > subscription does (no state reaches a feedback afterwards, pending
    /// > events are dropped, the loop finishes in the background). Keep the
    /// > cancellable for as long as the loop should run.
    ///
    /// - Parameters:
    ///   - spin: the spin to run.
    ///   - options: the loop's options.
    /// - Returns: the cancellable that owns the loop.
    public static func start<Event: Sendable>(
        spin: Spin<Output, Event>,
        options: SpinOptions = .init()
    ) -> AnyCancellable {
        // A failure to start is logged; the loop is then stopped from birth.
        let loop = SpinLoop(spin: spin, options: options)
        return AnyCancellable {
            loop.requestStop(.discardPending)
        }
    }
}
