/// Gives an atom a later value from the work its kind started (a task's
/// outcome, a sequence's element, a loop's state). Any thread.
///
/// A value sent for an older value of the atom (the atom was recomputed
/// or released since) is ignored. Package access: SpindleCombine's
/// publisher atom feeds its atom through one.
package struct AtomUpdater<Value: Sendable>: Sendable {
    /// Strong, as a context's: an updater kept by work that outlives the
    /// store finds its core closed. (No weak reference to the core exists:
    /// one would give it a side table and make every retain of it, one
    /// per computation, take the runtime's slow path.)
    private let core: StoreCore
    private let apply: @Sendable (AtomGraph, Value) -> Void

    init(core: StoreCore, apply: @escaping @Sendable (AtomGraph, Value) -> Void) {
        self.core = core
        self.apply = apply
    }

    /// Sets the atom's value and propagates it; from inside an operation
    /// (the same thread), after that operation's propagation.
    package func update(_ value: Value) {
        _ = try? core.perform { (graph: AtomGraph) throws(AtomError) in apply(graph, value) }
    }
}
