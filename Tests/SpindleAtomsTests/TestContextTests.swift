import Spindle
import SpindleAtoms
import SpindleTestSupport
import Testing

@Suite struct TestContextTests {
    @Test func overridesReplaceAnAtomOrAType() throws {
        let context = AtomTestContext()
        context.override(Source(id: 0)) { _ in 4 }
        #expect(try context.read(Twice()) == 8)
        context.override(Source.self) { atom in atom.id + 100 }
        #expect(try context.read(Source(id: 5)) == 105)
        #expect(try context.read(Source(id: 0)) == 4)
    }

    @Test func contextsShareNothing() throws {
        let first = AtomTestContext()
        let second = AtomTestContext()
        try first.watch(Source(id: 0))
        try first.set(3, for: Source(id: 0))
        #expect(try second.read(Source(id: 0)) == 0)
        #expect(try first.read(Source(id: 0)) == 3)
    }

    @Test func waitForUpdateReturnsAfterTheNextUpdate() async throws {
        let context = AtomTestContext()
        let gate = OpenOnce()
        try context.watch(Doubled(gate: gate).phase)
        let before = context.updateCount
        #expect(before == 0)
        gate.open()
        await context.waitForUpdate(after: before)
        #expect(try context.read(Doubled(gate: gate).phase).value == 0)
    }

    @Test func waitForReturnsTheFirstAcceptedValue() async throws {
        let context = AtomTestContext()
        try context.watch(Counting())  // the loop runs from here on
        Task.detached {
            for value in 1...5 {
                _ = context.emit(value, to: Counting())
            }
        }
        let total = try await context.waitFor(Counting()) { $0 == 15 }
        #expect(total == 15)
    }

    @Test func unwatchReleasesTheAtom() throws {
        let context = AtomTestContext()
        try context.watch(Source(id: 0))
        try context.set(2, for: Source(id: 0))
        context.unwatch(Source(id: 0))
        #expect(try context.read(Source(id: 0)) == 0)
        #expect(try context.snapshot().count == 0)
    }

    @Test func onUpdateIsCalledForEachUpdateOfAWatchedAtom() throws {
        let context = AtomTestContext()
        let calls = Counter()
        context.onUpdate = { _ = calls.add() }
        try context.watch(Twice())
        try context.set(1, for: Source(id: 0))
        try context.set(2, for: Source(id: 0))
        #expect(calls.current == 2)
    }
}
