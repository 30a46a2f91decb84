@testable import SpindleAtoms
import SpindleTestSupport
import Testing

/// A key whose values fall in eight hash classes: whole runs of keys
/// share a hash, so only equality tells them apart.
private struct Crowded: Hashable, Sendable {
    let id: Int
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id % 8) }
}

private struct CrowdedAtom: StateAtom {
    let key: Crowded
    func defaultValue(context: Context) -> Int { 0 }
}

/// What the index holds in these tests: a key, and a count of the
/// entries alive, to see that the index frees what it drops.
private final class Entry: IndexedByAtomKey {
    let key: AtomKey
    let id: Int
    let alive: LiveCount

    init(key: AtomKey, id: Int, alive: LiveCount) {
        self.key = key
        self.id = id
        self.alive = alive
        alive.count += 1
    }

    deinit { alive.count -= 1 }

    static var prefetchedBytes: Int { 64 }

    func hasKey(_ key: AtomKey) -> Bool { self.key == key }
}

private final class LiveCount {
    var count = 0
}

@Suite struct NodeIndexTests {
    /// The key of test key number `id`: half the ids are `Source`
    /// atoms, half `CrowdedAtom`s (the same numbers, another type), and
    /// ids past 1,000 are in a scope.
    private static func key(_ id: Int) -> AtomKey {
        let scope: UInt64 = id >= 1_000 ? 7 : 0
        let number = id % 1_000
        return number % 2 == 0 ? AtomKey(Source(id: number / 2), scope: scope)
            : AtomKey(CrowdedAtom(key: Crowded(id: number / 2)), scope: scope)
    }

    /// Random inserts, removals and lookups, checked against a
    /// `Dictionary` after every step; the table starts at two slots, so
    /// it grows, and the crowded keys make long runs for removals to
    /// shift back.
    @Test(arguments: [UInt64(1), 2, 3, 4])
    func agreesWithADictionaryThroughRandomInsertsAndRemovals(seed: UInt64) {
        let alive = LiveCount()
        do {
            var generator = SplitMix64(seed: seed)
            var index = NodeIndex<Entry>(capacity: 2)
            var expected: [AtomKey: Entry] = [:]
            for step in 0..<6_000 {
                let id = Int(generator.next() % 2_000)
                let key = Self.key(id)
                // Insert more often than remove early on, then the reverse,
                // so that the table fills, grows and empties again.
                let inserting = generator.next() % 100 < (step < 3_000 ? 70 : 30)
                if inserting, expected[key] == nil {
                    let entry = Entry(key: key, id: id, alive: alive)
                    index.insert(entry, for: key)
                    expected[key] = entry
                } else if !inserting, let entry = expected[key] {
                    let removed = index.remove(entry, for: key)
                    #expect(removed)
                    expected[key] = nil
                }
                let count = index.count
                #expect(count == expected.count)
                let probe = Self.key(Int(generator.next() % 2_000))
                let found = index[probe]
                #expect(found === expected[probe])
            }
            for id in 0..<2_000 {
                let key = Self.key(id)
                let found = index[key]
                #expect(found === expected[key], "key \(id)")
            }
            var seen = Set<Int>()
            index.forEach { seen.insert($0.id) }
            #expect(seen == Set(expected.values.map(\.id)))
            #expect(alive.count == expected.count)
            expected.removeAll()
        }
        #expect(alive.count == 0)
    }

    @Test func removingANodeThatIsNotIndexedChangesNothing() {
        let alive = LiveCount()
        do {
            var index = NodeIndex<Entry>()
            let key = Self.key(4)
            let indexed = Entry(key: key, id: 4, alive: alive)
            let stranger = Entry(key: key, id: 4, alive: alive)
            index.insert(indexed, for: key)
            let strangerRemoved = index.remove(stranger, for: key)
            #expect(!strangerRemoved)
            let found = index[key]
            #expect(found === indexed)
            let count = index.count
            #expect(count == 1)
            let removed = index.remove(indexed, for: key)
            #expect(removed)
            let foundAfter = index[key]
            #expect(foundAfter == nil)
            let removedAgain = index.remove(indexed, for: key)
            #expect(!removedAgain)
            let isEmpty = index.isEmpty
            #expect(isEmpty)
        }
        #expect(alive.count == 0)
    }

    @Test func theIndexFreesWhatItHoldsWhenItGoes() {
        let alive = LiveCount()
        do {
            var index = NodeIndex<Entry>(capacity: 4)
            for id in 0..<100 { index.insert(Entry(key: Self.key(id), id: id, alive: alive), for: Self.key(id)) }
            #expect(alive.count == 100)
            let all = index.all
            #expect(all.count == 100)
        }
        #expect(alive.count == 0)
    }
}
