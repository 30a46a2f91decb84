// What one set costs a store, counted instead of timed: `atoms-propagate`'s
// graph (see the harness's `PropagateShape`: per source 33 chains of three
// derived atoms, 10 % of all atoms watched, drawn from the same seed), then
// random sets of single sources, on the calling thread. `measured` is the
// region `scripts/atoms-footprint.sh` has callgrind count. Not a benchmark:
// it has no clock, and the harness's scenario stays the figure of record.
//
// Usage: atoms-footprint [sources, default 1000] [sets, default 20000]

import SpindleAtoms

let chainsPerSource = 33
let depth = 3
let derivedPerSource = chainsPerSource * depth
let atomsPerSource = derivedPerSource + 1
let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let sources = arguments.first ?? 1000
let sets = arguments.dropFirst().first ?? 20000

/// The harness's generator (SplitMix64), so the graph and the sets are the
/// scenario's.
struct SplitMix64 {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

/// Recomputations per derived atom: written by the computations, which run
/// on the one thread that sets, and read after the sets.
nonisolated(unsafe) let recomputations = UnsafeMutablePointer<UInt32>.allocate(capacity: sources * derivedPerSource)
recomputations.initialize(repeating: 0, count: sources * derivedPerSource)

struct Source: StateAtom, Hashable {
    let id: Int32
    func defaultValue(context: Context) -> Int { 0 }
}

struct Derived: ValueAtom, Hashable {
    let index: Int32

    func value(context: Context) throws(AtomError) -> Int {
        recomputations[Int(index)] &+= 1
        let parent = index % Int32(depth) == 0
            ? try context.watch(Source(id: index / Int32(derivedPerSource)))
            : try context.watch(Derived(index: index - 1))
        return parent &* 3 &+ 1
    }
}

@inline(never)
func measured(_ store: AtomStore, sets setSources: [Int32], from first: Int) throws {
    var value = first
    for source in setSources {
        value &+= 1
        try store.set(value, for: Source(id: source))
    }
}

var generator = SplitMix64(state: 0x5EED_0050)
let atoms = sources * atomsPerSource
let derived = sources * derivedPerSource
var order = Array(0..<atoms)
var watched = [Bool](repeating: false, count: atoms)
for index in 0..<(atoms / 10) {
    let pick = index + Int(generator.next() % UInt64(atoms - index))
    order.swapAt(index, pick)
    watched[order[index]] = true
}
let setSources = (0..<sets).map { _ in Int32(truncatingIfNeeded: generator.next() % UInt64(sources)) }

let store = AtomStore()
/// Watcher updates: delivered on the thread that sets (an uncontended
/// set delivers before it returns), read after the sets.
nonisolated(unsafe) var updates = 0
var subscriptions: [AtomSubscription<Int>] = []
for atom in 0..<atoms where watched[atom] {
    subscriptions.append(atom < derived
        ? try store.watch(Derived(index: Int32(atom))) { _ in updates += 1 }
        : try store.watch(Source(id: Int32(atom - derived))) { _ in updates += 1 })
}
for source in 0..<sources { try store.set(source + 1, for: Source(id: Int32(source))) }
let before = (0..<derived).reduce(0) { $0 + Int(recomputations[$1]) }
updates = 0
try measured(store, sets: setSources, from: sources)
let recomputed = (0..<derived).reduce(0) { $0 + Int(recomputations[$1]) } - before
print("\(sets) sets: \(recomputed) recomputations, \(updates) watcher updates")
for subscription in subscriptions { subscription.cancel() }
store.close()
