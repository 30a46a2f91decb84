import Spindle
import SpindleAtoms
import SpindleTestSupport
import Testing

@Suite struct PropagationTests {
    @Test func aDiamondRecomputesItsBottomOnceAndNeverSeesMixedValues() throws {
        let counts = ComputeCounts()
        let left = Derived(name: "left", watches: [.source(0)], counts: counts)
        let right = Derived(name: "right", watches: [.source(0)], counts: counts)
        let bottom = Derived(name: "bottom", watches: [.derived(.init(left)), .derived(.init(right))], counts: counts)
        let store = AtomStore()
        let seen = Recorder<Int>()
        let subscription = try store.watch(bottom) { seen.append($0) }
        #expect(subscription.initialValue == 0)
        counts.reset()
        for value in 1...5 { try store.set(value, for: Source(id: 0)) }
        // left + right are both the source: a mixed (glitched) bottom would be odd.
        #expect(seen.values == [2, 4, 6, 8, 10])
        #expect(counts["bottom"] == 5)
        #expect(counts["left"] == 5)
        #expect(counts["right"] == 5)
        subscription.cancel()
    }

    @Test func aWideDiamondRecomputesItsBottomOncePerSet() throws {
        let counts = ComputeCounts()
        let middles = (0..<200).map { Derived(name: "m\($0)", watches: [.source(0)], counts: counts) }
        let bottom = Derived(name: "bottom", watches: middles.map { .derived(.init($0)) }, counts: counts)
        let store = AtomStore()
        let seen = Recorder<Int>()
        let subscription = try store.watch(bottom) { seen.append($0) }
        counts.reset()
        try store.set(3, for: Source(id: 0))
        #expect(counts["bottom"] == 1)
        #expect(seen.values == [600])
        subscription.cancel()
    }

    @Test func onlyAtomsInUseRecompute() throws {
        let counts = ComputeCounts()
        let watched = Derived(name: "watched", watches: [.source(0)], counts: counts)
        let unwatched = Derived(name: "unwatched", watches: [.source(0)], counts: counts)
        let other = Derived(name: "other", watches: [.source(1)], counts: counts)
        let store = AtomStore()
        let a = try store.watch(watched) { _ in }
        let b = try store.watch(other) { _ in }
        #expect(try store.read(unwatched) == 0)
        counts.reset()
        try store.set(7, for: Source(id: 0))
        #expect(counts["watched"] == 1)
        #expect(counts["unwatched"] == 0)
        #expect(counts["other"] == 0)
        a.cancel()
        b.cancel()
    }

    @Test func anEqualValueStopsPropagation() throws {
        struct Parity: ValueAtom, Hashable {
            func value(context: Context) throws(AtomError) -> Bool { try context.watch(Source(id: 0)) % 2 == 0 }
        }
        let counts = ComputeCounts()
        struct Label: ValueAtom, Hashable {
            let counts: ComputeCounts
            func value(context: Context) throws(AtomError) -> String {
                counts.computed("label")
                return try context.watch(Parity()) ? "even" : "odd"
            }
            static func == (lhs: Label, rhs: Label) -> Bool { true }
            func hash(into hasher: inout Hasher) {}
        }
        let store = AtomStore()
        let seen = Recorder<String>()
        let subscription = try store.watch(Label(counts: counts)) { seen.append($0) }
        counts.reset()
        try store.set(2, for: Source(id: 0))  // still even: Label is not recomputed
        try store.set(4, for: Source(id: 0))
        try store.set(5, for: Source(id: 0))
        #expect(counts["label"] == 1)
        #expect(seen.values == ["odd"])
        subscription.cancel()
    }

    @Test func selectNotifiesOnlyWhenTheSelectedPartChanges() throws {
        struct Todo: Sendable, Equatable {
            var title: String
            var done: Bool
        }
        struct TodoAtom: StateAtom, Hashable {
            func defaultValue(context: Context) -> Todo { Todo(title: "a", done: false) }
        }
        let store = AtomStore()
        let seen = Recorder<Bool>()
        let keep = try store.watch(TodoAtom()) { _ in }
        let subscription = try store.watch(TodoAtom().select(\.done)) { seen.append($0) }
        try store.modify(TodoAtom()) { $0.title = "b" }
        try store.modify(TodoAtom()) { $0.done = true }
        try store.modify(TodoAtom()) { $0.title = "c" }
        #expect(seen.values == [true])
        #expect(try store.read(TodoAtom()).title == "c")
        subscription.cancel()
        keep.cancel()
    }

    @Test func aDependencyAddedByARecomputationIsWatched() throws {
        struct Switch: StateAtom, Hashable {
            func defaultValue(context: Context) -> Bool { false }
        }
        struct Chosen: ValueAtom, Hashable {
            func value(context: Context) throws(AtomError) -> Int {
                try context.watch(Switch()) ? try context.watch(Source(id: 2)) : try context.watch(Source(id: 1))
            }
        }
        let store = AtomStore()
        let seen = Recorder<Int>()
        let subscription = try store.watch(Chosen()) { seen.append($0) }
        try store.set(1, for: Source(id: 2))  // not watched yet: released after the set
        try store.set(true, for: Switch())
        try store.set(20, for: Source(id: 2))
        try store.set(10, for: Source(id: 1))  // no longer watched
        #expect(seen.values == [20])
        subscription.cancel()
    }

    /// A recomputation that starts watching an atom of its own height or
    /// above, whose dependency changed in the same update but is not
    /// recomputed yet: it reads that atom's new value, not its old one.
    ///
    /// `Gate` and `Tens` both watch the source (height 1); `Gate` watched
    /// it last, so the update recomputes `Gate` first. When the source
    /// turns positive, `Gate` starts watching `Shown` (height 2, above
    /// `Tens`): `Shown` must be brought up to date through `Tens` first.
    @Test func aNewWatchOfAHigherAtomReadsItsValueOfTheUpdate() throws {
        struct Tens: ValueAtom, Hashable {
            func value(context: Context) throws(AtomError) -> Int { try context.watch(Source(id: 0)) * 10 }
        }
        struct Shown: ValueAtom, Hashable {
            func value(context: Context) throws(AtomError) -> Int { try context.watch(Tens()) }
        }
        struct Pair: Equatable, Sendable {
            let source: Int
            let shown: Int?
        }
        struct Gate: ValueAtom, Hashable {
            let counts: ComputeCounts
            func value(context: Context) throws(AtomError) -> Pair {
                counts.computed("gate")
                let source = try context.watch(Source(id: 0))
                return Pair(source: source, shown: source > 0 ? try context.watch(Shown()) : nil)
            }
            static func == (lhs: Gate, rhs: Gate) -> Bool { true }
            func hash(into hasher: inout Hasher) {}
        }
        let counts = ComputeCounts()
        let store = AtomStore()
        let shown = try store.watch(Shown()) { _ in }
        let seen = Recorder<Pair>()
        let gate = try store.watch(Gate(counts: counts)) { seen.append($0) }
        counts.reset()
        try store.set(1, for: Source(id: 0))
        try store.set(2, for: Source(id: 0))
        #expect(seen.values == [Pair(source: 1, shown: 10), Pair(source: 2, shown: 20)])
        #expect(counts["gate"] == 2)
        gate.cancel()
        shown.cancel()
    }

    @Test func watchersSeeEveryChangeInOrder() throws {
        let store = AtomStore()
        let seen = Recorder<Int>()
        let subscription = try store.watch(Source(id: 0)) { seen.append($0) }
        for value in 1...100 { try store.set(value, for: Source(id: 0)) }
        #expect(seen.values == Array(1...100))
        subscription.cancel()
        try store.set(101, for: Source(id: 0))
        #expect(seen.values.last == 100)
    }

    @Test func aSetFromAWatcherIsDeliveredAfterTheCurrentValue() throws {
        let store = AtomStore()
        let seen = Recorder<Int>()
        let subscription = try store.watch(Source(id: 0)) { value in
            seen.append(value)
            if value < 3 { try? store.set(value + 1, for: Source(id: 0)) }
        }
        try store.set(1, for: Source(id: 0))
        #expect(seen.values == [1, 2, 3])
        subscription.cancel()
    }

    @Test func aSetInsideAComputationIsAppliedAfterTheUpdate() throws {
        struct Mirror: ValueAtom, Hashable {
            func value(context: Context) throws(AtomError) -> Int {
                let source = try context.watch(Source(id: 0))
                try context.set(source * 10, for: Source(id: 1))
                return source
            }
        }
        let store = AtomStore()
        let keep = try store.watch(Source(id: 1)) { _ in }
        let subscription = try store.watch(Mirror()) { _ in }
        try store.set(4, for: Source(id: 0))
        #expect(try store.read(Source(id: 1)) == 40)
        #expect(try store.read(Mirror()) == 4)
        subscription.cancel()
        keep.cancel()
    }
}

@Suite struct MainActorTests {
    @MainActor
    @Test func aStoreOnTheMainActorSetsAndReadsSynchronously() throws {
        let store = AtomStore()
        let seen = Recorder<Int>()
        let subscription = try store.watch(Twice()) { seen.append($0) }
        try store.set(21, for: Source(id: 0))
        #expect(try store.read(Twice()) == 42)
        #expect(seen.values == [42])
        subscription.cancel()
    }
}
