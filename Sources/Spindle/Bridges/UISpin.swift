import Dispatch

/// A spin for a user interface: it renders its states on one queue (the
/// main queue by default), and its loop stops when it is released.
///
/// @Snippet(path: "Spindle/Snippets/Spindle/UserInterfaces", slice: "screen")
///
/// Before ``start()`` nothing runs and nothing is rendered. From `start()`
/// on, each container given to ``render(on:using:)`` or
/// ``render(onMainActor:using:)`` sees the initial state
/// first (always, conflated or not, as Spin.Swift renders it), then the
/// loop's states in reduction order, on the render queue — or, for a
/// main-actor container, on the main actor; a container added later first
/// sees the last rendered state.
///
/// > Important: Renders are conflated by default
/// > (``StateDelivery/latestState``): a UI draws the latest state, so under
/// > a busy loop it skips intermediate states and never queues a backlog on
/// > the render queue — at most one render waits, and the final state is
/// > always rendered. Pass `rendering: .everyState` to render every state.
///
/// > Important: The container is held weakly: once it is gone, its renders
/// > stop. The loop stops (drain, in the background) when the last
/// > reference to the `UISpin` goes away; bindings hold one.
///
/// > Important: The main queue runs work only while the main thread serves
/// > it: an app's run loop, `dispatchMain()`, or `RunLoop.main.run()` in a
/// > command-line program (an `async` `main` serves it while it awaits).
///
/// **Thread safety:** every member may be used from any thread. The
/// containers and their render functions are touched only on the render
/// queue, which must be serial: choose the queue your container belongs to.
public final class UISpin<State: Sendable, Event: Sendable>: Sendable {
    private let spin: Spin<State, Event>
    private let options: SpinOptions
    /// The containers rendered on the render queue.
    private let renderers: Renderers<State>
    /// The main-actor containers, rendered on the main queue (the same
    /// object as `renderers` when the render queue is the main queue).
    private let mainRenderers: Renderers<State>
    private let rendering: StateDelivery
    // protected by lock: the loop, once started.
    private let running = Lock<SpinLoop<State, Event>?>(nil)

    /// Creates a UI spin; call ``start()`` to run it.
    /// - Parameters:
    ///   - spin: the spin to run.
    ///   - options: the loop's options.
    ///   - queue: the serial queue renders run on (the main queue by default).
    ///   - rendering: which states are rendered: the latest (the default;
    ///     conflated, see above) or every state.
    public init(
        spin: Spin<State, Event>,
        options: SpinOptions = .init(),
        renderOn queue: DispatchQueue = .main,
        rendering: StateDelivery = .latestState
    ) {
        self.spin = spin
        self.options = options
        self.renderers = Renderers(queue: queue)
        self.mainRenderers = queue === DispatchQueue.main ? renderers : Renderers(queue: .main)
        self.rendering = rendering
    }

    /// The latest published state (the initial state before ``start()``).
    /// Any thread.
    public var state: State {
        running.withLock { $0 }?.state ?? spin.initialState
    }

    /// Renders the loop's states on `container` (the latest, or every one:
    /// see `rendering:`), on the render queue, until the container is
    /// released (it is held weakly).
    ///
    /// The function is `@Sendable` and not isolated to an actor: it is
    /// called on the render queue. A container isolated to the main actor
    /// (a view controller, a `@MainActor` model) takes
    /// ``render(onMainActor:using:)`` instead, which renders on the main
    /// actor whatever the render queue: passing a `@MainActor` method here
    /// does not compile ("loses global actor 'MainActor'").
    ///
    /// - Parameters:
    ///   - container: the object to render on, usually the caller (`self`).
    ///   - function: picks the container's render method, e.g.
    ///     `{ $0.render(state:) }`; called on the render queue.
    public func render<Container: AnyObject>(
        on container: Container,
        using function: @escaping @Sendable (Container) -> (State) -> Void
    ) {
        renderers.add(RenderTarget(container: container, function: function).erased)
    }

    /// Renders the loop's states on a main-actor `container`, on the main
    /// actor (the main queue), until the container is released (it is held
    /// weakly). The isolation is in the signature: a main-actor container
    /// is always rendered on the main actor, whatever `renderOn:` says.
    ///
    /// - Parameters:
    ///   - container: the object to render on, usually the caller (`self`).
    ///   - function: picks the container's render method, e.g.
    ///     `{ $0.render(state:) }`; called on the main actor.
    @MainActor
    public func render<Container: AnyObject>(
        onMainActor container: Container,
        using function: @escaping @MainActor (Container) -> (State) -> Void
    ) {
        // The container is the main actor's: the target holds it weakly and
        // touches it only on the main queue, the main actor's executor.
        // Hence `nonisolated(unsafe)` for the two hand-overs.
        let onMain: @Sendable (Container) -> (State) -> Void = { container in
            nonisolated(unsafe) let container = container
            return { state in MainActor.assumeIsolated { function(container)(state) } }
        }
        nonisolated(unsafe) let container = container
        mainRenderers.add(RenderTarget(container: container, function: onMain).erased)
    }

    /// Starts the loop: renders begin with the initial state. Calling it
    /// again does nothing.
    public func start() {
        running.withLock { loop in
            guard loop == nil else { return }
            let renderers = self.renderers
            var rendered = spin.addingFeedback(
                Feedback<State, Event>(effect: { state in renderers.render(state) }, on: renderers.queue)
                    .delivering(rendering))
            if mainRenderers !== renderers {
                let mainRenderers = self.mainRenderers
                rendered = rendered.addingFeedback(
                    Feedback<State, Event>(effect: { state in mainRenderers.render(state) }, on: .main)
                        .delivering(rendering))
            }
            // The spin's observers stay with it.
            // It cannot throw: a failure is the loop's `startError` (and logged).
            loop = SpinLoop(spin: rendered, options: options)
        }
    }

    /// Sends an event to the loop. Any thread.
    /// - Returns: the loop's answer; ``EmitResult/stopped`` before ``start()``
    ///   (the event is not kept).
    @discardableResult
    public func emit(_ event: Event) -> EmitResult {
        guard let loop = running.withLock({ $0 }) else { return .stopped }
        return loop.emit(event)
    }

    /// A get/set pair for one value of the state: `get` reads it from
    /// ``state``, `set` emits `event(newValue)` (the state changes when the
    /// event is reduced). With SwiftUI, `Binding(spinBinding)` (in
    /// `SpindleCombine`) makes a SwiftUI `Binding` of it.
    /// - Parameters:
    ///   - keyPath: the value in the state.
    ///   - event: the event that sets a new value.
    /// - Returns: a binding that holds this UI spin (and so its loop).
    public func binding<Value>(
        for keyPath: KeyPath<State, Value> & Sendable,
        event: @escaping @Sendable (Value) -> Event
    ) -> SpinBinding<Value> {
        SpinBinding(
            get: { self.state[keyPath: keyPath] },
            set: { self.emit(event($0)) })
    }

    /// A get/set pair for one value of the state whose setter always emits
    /// the same event, whatever the new value (Spin.Swift's form:
    /// `binding(for: \.isPaused, event: .toggle)`): `get` reads the value
    /// from ``state``, `set` emits `event`.
    /// - Parameters:
    ///   - keyPath: the value in the state.
    ///   - event: the event emitted on every set.
    /// - Returns: a binding that holds this UI spin (and so its loop).
    public func binding<Value>(
        for keyPath: KeyPath<State, Value> & Sendable,
        event: Event
    ) -> SpinBinding<Value> {
        SpinBinding(
            get: { self.state[keyPath: keyPath] },
            set: { _ in self.emit(event) })
    }
}
