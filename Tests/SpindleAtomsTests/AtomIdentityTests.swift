import SpindleAtoms
import SpindleTestSupport
import Testing

/// A state atom named by an explicit `Int` key.
private struct Counter: StateAtom {
    let id: Int
    var key: Int { id }
    func defaultValue(context: Context) -> Int { 0 }
}

/// Another state atom type with the same key type and values.
private struct Gauge: StateAtom {
    let id: Int
    var key: Int { id }
    func defaultValue(context: Context) -> Int { 100 }
}

/// A key whose every value hashes alike: only equality tells them apart.
private struct CollidingKey: Hashable, Sendable {
    let name: String
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name }
    func hash(into hasher: inout Hasher) { hasher.combine(0) }
}

private struct Named: StateAtom {
    let key: CollidingKey
    func defaultValue(context: Context) -> String { "" }
}

@Suite struct AtomIdentityTests {
    @Test func atomsOfTwoTypesWithEqualKeysAreTwoAtoms() throws {
        let store = AtomStore()
        let counter = try store.watch(Counter(id: 1)) { _ in }
        let gauge = try store.watch(Gauge(id: 1)) { _ in }
        try store.set(7, for: Counter(id: 1))
        #expect(try store.read(Gauge(id: 1)) == 100)
        #expect(try store.read(Counter(id: 1)) == 7)
        try store.set(8, for: Gauge(id: 1))
        #expect(try store.read(Counter(id: 1)) == 7)
        #expect(try store.read(Gauge(id: 1)) == 8)
        counter.cancel()
        gauge.cancel()
    }

    @Test func keysWithEqualHashesAreToldApartByEquality() throws {
        let store = AtomStore()
        let first = Named(key: CollidingKey(name: "first"))
        let second = Named(key: CollidingKey(name: "second"))
        let subscription = try store.watch(first) { _ in }
        try store.set("one", for: first)
        try store.set("two", for: second)
        #expect(try store.read(first) == "one")
        #expect(try store.read(Named(key: CollidingKey(name: "first"))) == "one")
        #expect(try store.read(second) == "")  // not watched: released after the set
        subscription.cancel()
    }

    @Test func aSnapshotFindsAnAtomByTypeAndKey() throws {
        let store = AtomStore()
        let subscription = try store.watch(Counter(id: 3)) { _ in }
        try store.set(5, for: Counter(id: 3))
        let snapshot = try store.snapshot()
        #expect(snapshot.value(of: Counter(id: 3)) == 5)
        #expect(snapshot.value(of: Counter(id: 4)) == nil)
        #expect(snapshot.value(of: Gauge(id: 3)) == nil)
        subscription.cancel()
    }
}

/// A value atom whose value is its source's, doubled.
private struct TwiceTheSource: ValueAtom, Hashable {
    func value(context: Context) throws(AtomError) -> Int { try context.watch(Source(id: 9)) * 2 }
}

/// An atom that hands out another atom type's producer: a kind of its own
/// built from `TwiceTheSource`'s.
private struct Borrowing: Atom, Hashable {
    var producer: AtomProducer<Int> { TwiceTheSource().producer }
}

@Suite struct BorrowedProducerTests {
    @Test func anAtomWithAnotherTypesProducerRecomputesAsThatProducerSays() throws {
        let store = AtomStore()
        let seen = Recorder<Int>()
        let borrowing = try store.watch(Borrowing()) { seen.append($0) }
        let doubled = try store.watch(TwiceTheSource()) { _ in }
        #expect(borrowing.initialValue == 0)
        for value in 1...3 { try store.set(value, for: Source(id: 9)) }
        #expect(seen.values == [2, 4, 6])
        #expect(try store.read(Borrowing()) == 6)
        #expect(try store.read(TwiceTheSource()) == 6)
        borrowing.cancel()
        doubled.cancel()
    }
}
