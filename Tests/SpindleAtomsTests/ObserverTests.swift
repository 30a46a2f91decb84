import Spindle
import SpindleAtoms
import SpindleTestSupport
import Testing

final class EventRecorder: AtomObserver {
    let events = Recorder<String>()
    let snapshots = Recorder<AtomSnapshot>()
    func atomAssigned(_ atom: AtomDescription) { events.append("assigned \(atom)") }
    func atomChanged(_ atom: AtomDescription, snapshot: AtomSnapshot) {
        events.append("changed \(atom)")
        snapshots.append(snapshot)
    }
    func atomReleased(_ atom: AtomDescription) { events.append("released \(atom)") }
}

struct Twice: ValueAtom, Hashable {
    func value(context: Context) throws(AtomError) -> Int { try context.watch(Source(id: 0)) * 2 }
}

@Suite struct ObserverTests {
    @Test func observersHearAssignmentsChangesAndReleasesInOrder() throws {
        let observer = EventRecorder()
        let store = AtomStore(observers: [observer])
        let subscription = try store.watch(Twice()) { _ in }
        try store.set(3, for: Source(id: 0))
        subscription.cancel()
        #expect(observer.events.values == [
            "assigned Source(id: 0)", "assigned Twice()",
            "changed Source(id: 0)", "changed Twice()",
            "released Twice()", "released Source(id: 0)",
        ])
        let snapshot = try #require(observer.snapshots.values.last)
        #expect(snapshot.value(of: Twice()) == 6)
        #expect(snapshot.value(of: Source(id: 0)) == 3)
    }

    @Test func restoringASnapshotWritesStateAtomsBackAndRecomputes() throws {
        let store = AtomStore()
        let seen = Recorder<Int>()
        let subscription = try store.watch(Twice()) { seen.append($0) }
        try store.set(1, for: Source(id: 0))
        let before = try store.snapshot()
        try store.set(5, for: Source(id: 0))
        try store.restore(before)
        #expect(try store.read(Twice()) == 2)
        #expect(seen.values == [2, 10, 2])
        subscription.cancel()
    }

    @Test func overridesReplaceOneAtomOrEveryAtomOfAType() throws {
        let store = AtomStore(overrides: [
            AtomOverride(Source(id: 1)) { _ in 100 },
            AtomOverride(Source.self) { atom in atom.id * 1_000 },
        ])
        #expect(try store.read(Source(id: 1)) == 100)
        #expect(try store.read(Source(id: 2)) == 2_000)
        #expect(try store.read(Twice()) == 0)
    }
}
