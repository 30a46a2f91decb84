import Spindle

// Spin.Swift's names for its Combine flavour, so that code written against
// Spin_Combine reads the same here. Each is the Spindle type itself.

/// Spin.Swift's `SwiftUISpin`: an `ObservableObject` spin.
public typealias SwiftUISpin<State: Sendable, Event: Sendable> = ObservableSpin<State, Event>
/// Spin.Swift's `CombineSwiftUISpin`.
public typealias CombineSwiftUISpin<State: Sendable, Event: Sendable> = ObservableSpin<State, Event>
/// Spin.Swift's `CombineFeedback`.
public typealias CombineFeedback<State: Sendable, Event: Sendable> = Feedback<State, Event>
/// Spin.Swift's `CombineReducer`.
public typealias CombineReducer<State, Event> = Reducer<State, Event>
/// Spin.Swift's `CombineSpin`.
public typealias CombineSpin<State: Sendable, Event: Sendable> = Spin<State, Event>
/// Spin.Swift's `CombineUISpin`.
public typealias CombineUISpin<State: Sendable, Event: Sendable> = UISpin<State, Event>
