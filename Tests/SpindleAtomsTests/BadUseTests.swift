import Spindle
import SpindleAtoms
import SpindleTestSupport
import Testing

struct CycleA: ValueAtom, Hashable {
    func value(context: Context) throws(AtomError) -> Int { try context.watch(CycleB()) + 1 }
}
struct CycleB: ValueAtom, Hashable {
    func value(context: Context) throws(AtomError) -> Int { try context.watch(CycleA()) + 1 }
}

/// Watches `Source(0)` until it is set to 1, then a dependent of its own.
struct Turncoat: ValueAtom, Hashable {
    func value(context: Context) throws(AtomError) -> Int {
        try context.watch(Source(id: 0)) == 1 ? try context.watch(Follower()) : 0
    }
}
struct Follower: ValueAtom, Hashable {
    func value(context: Context) throws(AtomError) -> Int { try context.watch(Turncoat()) + 1 }
}

final class FailureRecorder: AtomObserver {
    let failures = Recorder<AtomError>()
    func atomFailed(_ error: AtomError) { failures.append(error) }
}

@Suite struct BadUseTests {
    @Test func aCycleIsThrownWithItsPath() throws {
        let store = AtomStore()
        #expect(throws: AtomError.cycle(path: ["CycleA()", "CycleB()", "CycleA()"])) {
            try store.read(CycleA())
        }
        #expect(try store.snapshot().count == 0)
        // The store goes on.
        try store.set(1, for: Source(id: 0))
    }

    @Test func aCycleFoundWhilePropagatingIsReportedAndTheAtomKeepsItsValue() throws {
        let observer = FailureRecorder()
        let store = AtomStore(observers: [observer])
        let seen = Recorder<Int>()
        let follower = try store.watch(Follower()) { seen.append($0) }
        #expect(follower.initialValue == 1)
        try store.set(1, for: Source(id: 0))
        #expect(observer.failures.values == [.cycle(path: ["Turncoat()", "Follower()", "Turncoat()"])])
        #expect(try store.read(Follower()) == 1)
        try store.set(2, for: Source(id: 0))
        #expect(try store.read(Follower()) == 1)
        #expect(seen.values.isEmpty)
        follower.cancel()
    }
}
