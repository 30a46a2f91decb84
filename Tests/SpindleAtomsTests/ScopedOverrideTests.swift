import Spindle
import SpindleAtoms
import SpindleTestSupport
import Testing

/// A state atom with a default a scope overrides.
struct Greeting: StateAtom, Hashable {
    func defaultValue(context: Context) -> String { "hello" }
}

@Suite struct ScopedOverrideTests {
    @Test func aScopedStoreSeesItsOverrideAndTheStoreDoesNot() throws {
        let store = AtomStore()
        let scope = store.scoped(overriding: [AtomOverride(Greeting()) { _ in "bonjour" }])
        #expect(try scope.read(Greeting()) == "bonjour")
        #expect(try store.read(Greeting()) == "hello")
    }

    @Test func aScopesOverriddenStateAtomIsItsOwn() throws {
        let store = AtomStore()
        let scope = store.scoped(overriding: [AtomOverride(Source(id: 1)) { _ in 100 }])
        let inStore = try store.watch(Source(id: 1)) { _ in }
        let inScope = try scope.watch(Source(id: 1)) { _ in }
        try scope.set(101, for: Source(id: 1))
        try store.set(7, for: Source(id: 1))
        #expect(try scope.read(Source(id: 1)) == 101)
        #expect(try store.read(Source(id: 1)) == 7)
        try scope.modify(Source(id: 1)) { $0 += 1 }
        #expect(try scope.read(Source(id: 1)) == 102)
        try scope.reset(Source(id: 1))
        #expect(try scope.read(Source(id: 1)) == 100)
        #expect(try store.read(Source(id: 1)) == 7)
        inStore.cancel()
        inScope.cancel()
    }

    @Test func anAtomTheScopeDoesNotOverrideIsTheStores() throws {
        let store = AtomStore()
        let scope = store.scoped(overriding: [AtomOverride(Source(id: 1)) { _ in 100 }])
        let keep = try store.watch(Source(id: 2)) { _ in }
        try scope.set(5, for: Source(id: 2))
        #expect(try store.read(Source(id: 2)) == 5)
        keep.cancel()
    }

    @Test func aDerivedAtomIsComputedInTheStoreUnlessTheScopeOverridesIt() throws {
        let counts = ComputeCounts()
        let derived = Derived(name: "d", watches: [.source(1)], counts: counts)
        let store = AtomStore()
        let keep = try store.watch(Source(id: 1)) { _ in }
        try store.set(3, for: Source(id: 1))
        let scope = store.scoped(overriding: [AtomOverride(Source(id: 1)) { _ in 100 }])
        #expect(try scope.read(derived) == 3)
        let overridden = store.scoped(overriding: [AtomOverride(derived) { _ in -1 }])
        #expect(try overridden.read(derived) == -1)
        keep.cancel()
    }

    @Test func scopesAreApartAndAnInnerScopeWinsOverItsOuter() throws {
        let store = AtomStore()
        let outer = store.scoped(overriding: [
            AtomOverride(Greeting()) { _ in "outer" }, AtomOverride(Source.self) { _ in 9 },
        ])
        let inner = outer.scoped(overriding: [AtomOverride(Greeting()) { _ in "inner" }])
        let sibling = store.scoped(overriding: [AtomOverride(Greeting()) { _ in "sibling" }])
        #expect(try outer.read(Greeting()) == "outer")
        #expect(try inner.read(Greeting()) == "inner")
        #expect(try inner.read(Source(id: 4)) == 9)
        #expect(try sibling.read(Greeting()) == "sibling")
        #expect(try store.read(Greeting()) == "hello")
    }

    @Test func aScopesWatcherSeesItsAtomsChangesAndItIsReleasedWithItsLastWatcher() async throws {
        let observer = ReleaseRecorder()
        let store = AtomStore(observers: [observer])
        let scope = store.scoped(overriding: [AtomOverride(Source(id: 1)) { _ in 100 }])
        let seen = Locked<[Int]>([])
        let subscription = try scope.watch(Source(id: 1)) { value in seen.withLock { $0.append(value) } }
        #expect(subscription.initialValue == 100)
        try scope.set(101, for: Source(id: 1))
        try store.set(5, for: Source(id: 1))
        #expect(seen.withLock { $0 } == [101])
        subscription.cancel()
        #expect(observer.released.values.filter { $0.isDescribing(Source(id: 1)) && $0.isScoped }.count == 1)
        #expect(try scope.read(Source(id: 1)) == 100)
    }

    @Test func closingAScopeClosesTheStoreAndReleasingOneDoesNot() throws {
        let store = AtomStore()
        do {
            let scope = store.scoped(overriding: [])
            #expect(try scope.read(Greeting()) == "hello")
        }
        #expect(try store.read(Greeting()) == "hello")
        store.scoped(overriding: []).close()
        #expect(throws: AtomError.storeClosed) { try store.read(Greeting()) }
    }
}

final class ReleaseRecorder: AtomObserver {
    let released = Recorder<AtomDescription>()
    func atomReleased(_ atom: AtomDescription) { released.append(atom) }
}
