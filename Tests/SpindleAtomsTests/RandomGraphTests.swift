import SpindleAtoms
import SpindleTestSupport
import Testing

/// Random graphs whose atoms choose what they watch from what they read
/// (dynamic dependencies), set at random and checked after every set
/// against the same graph evaluated from scratch: each watched atom is
/// told at most once per set, only when its value changed, and only its
/// value of that set (no stale or mixed value, during or after it).
@Suite struct RandomGraphTests {
    static let sources = 4
    static let derivedCount = 14

    /// Which atoms derived atom `index` reads: its selector, then one of
    /// two others by the selector's parity. Each names a source
    /// (negative: `-1 - id`) or a derived atom of a lower index.
    struct Shape: Sendable {
        let selector: Int
        let ifEven: Int
        let ifOdd: Int
    }

    final class Graph: Sendable {
        let shapes: [Shape]
        init(shapes: [Shape]) { self.shapes = shapes }
    }

    struct Derived: ValueAtom, Hashable {
        let index: Int
        let graph: Graph

        static func == (lhs: Derived, rhs: Derived) -> Bool { lhs.index == rhs.index }
        func hash(into hasher: inout Hasher) { hasher.combine(index) }

        func value(context: Context) throws(AtomError) -> Int {
            let shape = graph.shapes[index]
            let selector = try read(shape.selector, context)
            let chosen = try read(selector % 2 == 0 ? shape.ifEven : shape.ifOdd, context)
            return RandomGraphTests.combine(index, selector, chosen)
        }

        private func read(_ atom: Int, _ context: Context) throws(AtomError) -> Int {
            atom < 0 ? try context.watch(Source(id: -1 - atom)) : try context.watch(Derived(index: atom, graph: graph))
        }
    }

    /// Small values, so that parities flip often.
    static func combine(_ index: Int, _ selector: Int, _ chosen: Int) -> Int {
        (selector &* 3 &+ chosen &+ index) % 7
    }

    /// Derived atom `index` evaluated from scratch.
    static func evaluate(_ index: Int, shapes: [Shape], sources: [Int]) -> Int {
        func read(_ atom: Int) -> Int { atom < 0 ? sources[-1 - atom] : evaluate(atom, shapes: shapes, sources: sources) }
        let shape = shapes[index]
        let selector = read(shape.selector)
        return combine(index, selector, read(selector % 2 == 0 ? shape.ifEven : shape.ifOdd))
    }

    @Test(arguments: Array(UInt64(11)...40))
    func everyWatchedAtomIsToldOnlyItsValueOfEachSet(seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        func pick(below index: Int) -> Int {
            let choice = Int(generator.next() % UInt64(index + Self.sources))
            return choice < index ? choice : -1 - (choice - index)
        }
        let shapes = (0..<Self.derivedCount).map { index in
            Shape(selector: pick(below: index), ifEven: pick(below: index), ifOdd: pick(below: index))
        }
        let graph = Graph(shapes: shapes)
        let watched = (0..<Self.derivedCount).filter { _ in generator.next() % 2 == 0 }
        var sources = [Int](repeating: 0, count: Self.sources)

        let store = AtomStore()
        let seen = (0..<Self.derivedCount).map { _ in Recorder<Int>() }
        var subscriptions: [AtomSubscription<Int>] = []
        // Every source watched, so that each keeps its value while no
        // derived atom reads it (an atom not in use is released).
        for id in 0..<Self.sources { subscriptions.append(try store.watch(Source(id: id)) { _ in }) }
        let firstDerived = subscriptions.count
        for index in watched {
            let recorder = seen[index]
            subscriptions.append(try store.watch(Derived(index: index, graph: graph)) { recorder.append($0) })
        }
        var last = watched.map { Self.evaluate($0, shapes: shapes, sources: sources) }
        for (position, index) in watched.enumerated() {
            #expect(subscriptions[firstDerived + position].initialValue == last[position], "atom \(index) at the start")
        }
        for step in 0..<400 {
            let source = Int(generator.next() % UInt64(Self.sources))
            let value = Int(generator.next() % 5)
            let told = watched.map { seen[$0].count }
            sources[source] = value
            try store.set(value, for: Source(id: source))
            for (position, index) in watched.enumerated() {
                let expected = Self.evaluate(index, shapes: shapes, sources: sources)
                let values = seen[index].values.dropFirst(told[position])
                let context = "seed \(seed), set \(step) (source \(source) = \(value)), atom \(index)"
                if expected == last[position] {
                    #expect(values.isEmpty, "\(context): told \(Array(values)) for an unchanged \(expected)")
                } else {
                    #expect(Array(values) == [expected], "\(context): told \(Array(values)), expected [\(expected)]")
                }
                #expect(try store.read(Derived(index: index, graph: graph)) == expected, "\(context): read")
                last[position] = expected
            }
        }
        for subscription in subscriptions { subscription.cancel() }
    }
}
