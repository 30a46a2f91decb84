import Spindle
import SpindleAtoms
import SpindleTestSupport

/// A state atom keyed by a number.
struct Source: StateAtom, Hashable {
    var id = 0
    func defaultValue(context: Context) -> Int { 0 }
}

/// A derived atom that counts its computations in `counts` and maps its
/// dependency with `transform`.
struct Derived: ValueAtom, Hashable {
    let name: String
    let watches: [Watched]
    let counts: ComputeCounts

    enum Watched: Hashable, Sendable {
        case source(Int)
        case derived(Box)
    }

    /// A derived atom behind a reference, so that Derived can nest.
    final class Box: Hashable, Sendable {
        let atom: Derived
        init(_ atom: Derived) { self.atom = atom }
        static func == (lhs: Box, rhs: Box) -> Bool { lhs.atom == rhs.atom }
        func hash(into hasher: inout Hasher) { hasher.combine(atom) }
    }

    func value(context: Context) throws(AtomError) -> Int {
        counts.computed(name)
        var sum = 0
        for watched in watches {
            switch watched {
            case .source(let id): sum += try context.watch(Source(id: id))
            case .derived(let box): sum += try context.watch(box.atom)
            }
        }
        return sum
    }

    static func == (lhs: Derived, rhs: Derived) -> Bool { lhs.name == rhs.name }
    func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

/// How many times each derived atom was computed.
final class ComputeCounts: Sendable {
    private let counts = Locked<[String: Int]>([:])
    func computed(_ name: String) { counts.withLock { $0[name, default: 0] += 1 } }
    subscript(name: String) -> Int { counts.withLock { $0[name] ?? 0 } }
    func reset() { counts.withLock { $0 = [:] } }
    var total: Int { counts.withLock { $0.values.reduce(0, +) } }
}
