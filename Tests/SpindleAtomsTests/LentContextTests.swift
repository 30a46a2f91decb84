@testable import SpindleAtoms
import Synchronization
import Testing

/// The contexts that atoms below keep past their computations.
private let keptContexts = Mutex<[AtomTransactionContext]>([])

private struct Base: StateAtom, Hashable {
    func defaultValue(context: Context) -> Int { 5 }
}

/// Keeps a copy of each context it is computed with, as a user's atom may
/// (a closure that escapes the computation).
private struct Keeper: ValueAtom, Hashable {
    let id: Int

    func value(context: Context) throws(AtomError) -> Int {
        let base = try context.watch(Base())
        keptContexts.withLock { $0.append(context) }
        return base * 2
    }
}

/// A computation's context lends it the node without counting it
/// (`AtomGraph.withLentContext`): the bits are written in place and never
/// destroyed. These tests hold the two things that makes true: the bits
/// are the context's layout, and a copy of the context counts the node, so
/// it lives exactly as long as the copies.
@Suite struct LentContextTests {
    @Test func theLentBitsHaveTheContextsLayout() {
        #expect(MemoryLayout<AtomTransactionContext>.size == MemoryLayout<LentContextBits>.size)
        #expect(MemoryLayout<AtomTransactionContext>.stride == MemoryLayout<LentContextBits>.stride)
        #expect(MemoryLayout<AtomTransactionContext>.alignment == MemoryLayout<LentContextBits>.alignment)
        #expect(MemoryLayout<AtomTransactionContext>.offset(of: \.generation)
            == MemoryLayout<LentContextBits>.offset(of: \.generation))
        #expect(MemoryLayout<AtomTransactionContext>.offset(of: \.guarded)
            == MemoryLayout<LentContextBits>.offset(of: \.node))
    }

    @Test func aContextKeptPastItsComputationKeepsItsNodeUntilTheLastCopyGoes() throws {
        let store = AtomStore()
        keptContexts.withLock { $0.removeAll() }
        // Base stays watched: it outlives the keeper.
        let baseWatch = try store.watch(Base()) { _ in }
        do {
            // (A subscription holds its node: it goes with this scope.)
            let subscription = try store.watch(Keeper(id: 1)) { _ in }
            // A second computation: the node's second lent context, kept too.
            try store.set(6, for: Base())
            #expect(try store.read(Keeper(id: 1)) == 12)
            subscription.cancel()
        }
        var kept = keptContexts.withLock { contexts in
            defer { contexts.removeAll() }
            return contexts
        }
        try #require(kept.count == 2)
        weak let node = kept[0].guarded.node
        #expect(node != nil && node === kept[1].guarded.node)
        #expect(node?.isReleased == true)
        // Released, and kept alive by the copies: a kept context still
        // reads the store (without depending on what it reads).
        #expect(try kept[0].read(Base()) == 6)
        #expect(try kept[1].watch(Base()) == 6)
        kept.removeFirst()
        #expect(node != nil)
        kept.removeAll()
        #expect(node == nil)
        baseWatch.cancel()
        store.close()
    }
}
