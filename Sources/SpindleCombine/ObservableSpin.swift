#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Spindle

/// A spin as an `ObservableObject` on the main actor: its `@Published`
/// ``state`` follows the loop. This is Spin.Swift's `SwiftUISpin`
/// (``SwiftUISpin`` names it too); `ObservationSpin`, in Spindle, is the
/// `@Observable` form that needs no Combine.
///
/// @Snippet(path: "Spindle/Snippets/SpindleCombine/CombineObservableSpin")
///
/// Before ``start()`` nothing runs and ``state`` is the initial state. From
/// `start()` on, ``state`` is set on the main actor to the loop's new
/// states in reduction order; `objectWillChange` and `$state` send there,
/// before each change. The initial state is published once, as the value
/// `$state` gives a new subscriber; `start()` does not publish it again.
/// For an `Equatable` state, a state equal to the one ``state`` holds is not
/// published (no `objectWillChange`, no `$state` value), as Spin.Swift's
/// `SwiftUISpin` skips it. It is built on `UISpin`, rendering on the main
/// actor.
///
/// > Important: Publishing is conflated by default
/// > (`StateDelivery.latestState`): under a busy loop ``state`` skips
/// > intermediate states, at most one publish waits on the main queue, and
/// > the final state is always published. Pass `publishing: .everyState` to
/// > publish every state.
///
/// > Important: The loop stops (drain, in the background) when the last
/// > reference to the `ObservableSpin` goes away; bindings hold the loop
/// > (but not the object), so they keep it running.
///
/// > Important: The main queue runs work only while the main thread serves
/// > it: an app's run loop, `dispatchMain()`, or `RunLoop.main.run()` in a
/// > command-line program (an `async` `main` serves it while it awaits).
///
/// **Thread safety:** the type is isolated to the main actor: ``state``,
/// `objectWillChange`, `$state` and ``start()`` are used there.
/// ``emit(_:)`` and the `binding(for:event:)` methods may be used from any thread.
@MainActor
public final class ObservableSpin<State: Sendable, Event: Sendable>: ObservableObject {
    /// The latest state published on the main actor (the initial state
    /// before ``start()``).
    @Published public private(set) var state: State

    private nonisolated let uiSpin: UISpin<State, Event>
    /// The renders `state` takes (not the initial one again, none equal to
    /// the state held).
    private var filter = HeldStateFilter<State>()

    /// Creates an observable spin; call ``start()`` to run it.
    /// - Parameters:
    ///   - spin: the spin to run.
    ///   - options: the loop's options.
    ///   - publishing: which states are published: the latest (the
    ///     default; conflated) or every state.
    public init(
        spin: Spin<State, Event>,
        options: SpinOptions = .init(),
        publishing: StateDelivery = .latestState
    ) {
        state = spin.initialState
        uiSpin = UISpin(spin: spin, options: options, renderOn: .main, rendering: publishing)
        uiSpin.render(onMainActor: self, using: { $0.publish(state:) })
    }

    /// Starts the loop: ``state`` follows it from the initial state on.
    /// Calling it again does nothing.
    public func start() {
        uiSpin.start()
    }

    /// Sends an event to the loop. Any thread.
    /// - Returns: the loop's answer; `EmitResult.stopped` before
    ///   ``start()`` (the event is not kept).
    @discardableResult
    public nonisolated func emit(_ event: Event) -> EmitResult {
        uiSpin.emit(event)
    }

    /// A get/set pair for one value of the state: `get` reads it from the
    /// loop's latest state (any thread), `set` emits `event(newValue)` (the
    /// state changes when the event is reduced). With SwiftUI,
    /// `Binding(spinBinding)` makes a SwiftUI `Binding` of it.
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

    /// A get/set pair for one value of the state whose setter always emits
    /// `event` (Spin.Swift's `binding(for: \.isPaused, event: .toggle)`).
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

    private func publish(state: State) {
        guard filter.admits(state, replacing: self.state) else { return }
        self.state = state
    }
}
