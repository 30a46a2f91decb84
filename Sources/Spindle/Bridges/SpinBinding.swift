/// A value of a ``UISpin``'s state that can be read and set; see
/// ``UISpin/binding(for:event:)-(_,(Value)->Event)``.
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
