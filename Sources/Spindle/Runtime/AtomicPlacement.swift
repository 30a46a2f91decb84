internal import Atomics

/// Atomics placed at fixed offsets of raw memory their owner allocates
/// (a loop's words, a pool's line, its sleepers' lines, a bounded
/// queue's counters): several on one line, where an atomic object each
/// would cost an allocation and, cold, a miss each. The owner initializes
/// each place once, then reads it only through `atomic(at:)` views, and
/// frees the memory only when no view is in use; the representations need
/// no deinitialization.
extension UnsafeMutableRawPointer {
    /// Binds and initializes an atomic `Value` at `offset`, to `value`.
    @discardableResult
    @inline(__always)
    func initializeAtomic<Value: AtomicValue>(at offset: Int, to value: Value) -> UnsafeAtomic<Value> {
        let place = (self + offset).bindMemory(to: Value.AtomicRepresentation.self, capacity: 1)
        place.initialize(to: Value.AtomicRepresentation(value))
        return UnsafeAtomic(at: place)
    }

    /// The atomic `Value` that `initializeAtomic(at:to:)` placed at `offset`.
    @inline(__always)
    func atomic<Value: AtomicValue>(at offset: Int, as type: Value.Type = Value.self) -> UnsafeAtomic<Value> {
        UnsafeAtomic(at: (self + offset).assumingMemoryBound(to: Value.AtomicRepresentation.self))
    }
}
