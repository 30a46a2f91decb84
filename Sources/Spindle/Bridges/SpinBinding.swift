/// A value of a ``UISpin``'s state that can be read and set; see
/// ``UISpin/binding(for:event:)``.
///
/// **Thread safety:** `get` and `set` may be called from any thread.
public struct SpinBinding<Value>: Sendable {
    /// Reads the value from the latest state.
    public let get: @Sendable () -> Value
    /// Emits the event for a new value.
    public let set: @Sendable (Value) -> Void

    /// Creates a binding from its two halves.
    public init(get: @escaping @Sendable () -> Value, set: @escaping @Sendable (Value) -> Void) {
        self.get = get
        self.set = set
    }

    /// `get()` to read, `set(_:)` to write.
    public var wrappedValue: Value {
        get { get() }
        nonmutating set { set(newValue) }
    }
}

#if canImport(SwiftUI)
import SwiftUI

extension Binding {
    /// A SwiftUI binding over a ``SpinBinding``: reading calls its `get`,
    /// writing its `set` (which emits the event).
    public init(_ binding: SpinBinding<Value>) {
        self.init(get: binding.get, set: { binding.set($0) })
    }
}
#endif
