#if canImport(Observation)
import Dispatch
import Observation

/// A spin as an `@Observable` model for SwiftUI, on the main actor: views
/// that read ``state`` are updated when it changes, with no Combine
/// (`ObservableSpin`, in SpindleCombine, is the `ObservableObject` form).
///
/// @Snippet(path: "Spindle/Snippets/Spindle/UserInterfaces", slice: "observation")
///
/// In a SwiftUI view, hold it in `@State` and start it in `onAppear`:
///
/// @Snippet(path: "Spindle/Snippets/Spindle/UserInterfaces", slice: "swiftui")
///
/// Before ``start()`` nothing runs and ``state`` is the initial state. From
/// `start()` on, ``state`` follows the loop on the main actor: it is set to
/// each new state (the initial state, which it already holds, is not set
/// again, so observers see no change at start). For an `Equatable` state, a
/// state equal to the one ``state`` holds is not set either (observers see
/// no change), as Spin.Swift's `SwiftUISpin` skips it. It is built on
/// ``UISpin``, rendering on the main actor.
///
/// > Important: Publishing is conflated by default
/// > (``StateDelivery/latestState``): under a busy loop ``state`` skips
/// > intermediate states, at most one update waits on the main queue, and
/// > the final state is always published. Pass `publishing: .everyState` to
/// > publish every state.
///
/// > Important: The loop stops (drain, in the background) when the last
/// > reference to the `ObservationSpin` goes away; bindings hold the loop
/// > (not the object), so they keep it running. The main queue runs work
/// > only while the main thread serves it (an app's run loop,
/// > `dispatchMain()`, or an `async` `main` while it awaits).
///
/// **Thread safety:** ``state`` and ``start()`` belong to the main actor;
/// ``emit(_:)`` and the bindings may be used from any thread.
@MainActor
@Observable
public final class ObservationSpin<State: Sendable, Event: Sendable> {
    /// The latest state published on the main actor (the initial state
    /// before ``start()``).
    public private(set) var state: State

    private nonisolated let uiSpin: UISpin<State, Event>
    /// The renders `state` takes (not the initial one again, none equal to
    /// the state held).
    @ObservationIgnored private var filter = HeldStateFilter<State>()

    /// Creates an observable spin; call ``start()`` to run it.
    /// - Parameters:
    ///   - spin: the spin to run.
    ///   - options: the loop's options.
    ///   - publishing: which states are published: the latest (the
    ///     default; conflated) or every state.
    public init(spin: Spin<State, Event>, options: SpinOptions = .init(), publishing: StateDelivery = .latestState) {
        state = spin.initialState
        uiSpin = UISpin(spin: spin, options: options, renderOn: .main, rendering: publishing)
        uiSpin.render(onMainActor: self, using: { $0.publish })
    }

    /// Starts the loop: ``state`` follows it from the initial state on.
    /// Calling it again does nothing.
    public func start() {
        uiSpin.start()
    }

    /// Sends an event to the loop. Any thread.
    /// - Returns: the loop's answer; ``EmitResult/stopped`` before
    ///   ``start()`` (the event is not kept).
    @discardableResult
    public nonisolated func emit(_ event: Event) -> EmitResult {
        uiSpin.emit(event)
    }

    /// A get/set pair for one value of the state: `get` reads it from the
    /// loop's latest state (any thread), `set` emits `event(newValue)`.
    /// - Parameters:
    ///   - keyPath: the value in the state.
    ///   - event: the event that sets a new value.
    /// - Returns: a binding that holds the loop.
    public nonisolated func binding<Value>(
        for keyPath: KeyPath<State, Value> & Sendable,
        event: @escaping @Sendable (Value) -> Event
    ) -> SpinBinding<Value> {
        uiSpin.binding(for: keyPath, event: event)
    }

    /// A get/set pair whose setter always emits `event` (Spin.Swift's
    /// `binding(for: \.isPaused, event: .toggle)`).
    /// - Parameters:
    ///   - keyPath: the value in the state.
    ///   - event: the event emitted on every set.
    /// - Returns: a binding that holds the loop.
    public nonisolated func binding<Value>(
        for keyPath: KeyPath<State, Value> & Sendable,
        event: Event
    ) -> SpinBinding<Value> {
        uiSpin.binding(for: keyPath, event: event)
    }

    private func publish(_ state: State) {
        guard filter.admits(state, replacing: self.state) else { return }
        self.state = state
    }
}
#endif
