// Atoms: a state atom, atoms derived from it, a store that watches and sets
// them, a selection of part of a value, an atom as an Observable object, and
// a Spindle loop as an atom. The hidden lines check what the article
// promises: glitch-free and minimal propagation, release, and bad use.

// snippet.hide
import Logging
import Spindle
import SpindleAtoms
import Synchronization

/// How many times each derived atom was computed, to check the article's
/// promises (glitch-free, minimal).
let computations = Mutex<[String: Int]>([:])
func counted(_ name: String) { computations.withLock { $0[name, default: 0] += 1 } }
func computed(_ name: String) -> Int { computations.withLock { $0[name, default: 0] } }

/// What the watchers were called with.
let heard = Mutex<[String]>([])
func hear(_ line: String) { heard.withLock { $0.append(line) } }
func takeHeard() -> [String] { heard.withLock { lines in defer { lines = [] }; return lines } }

/// `precondition` for a check that calls the store (which throws).
func expect(_ condition: @autoclosure () throws(AtomError) -> Bool, _ message: String) throws(AtomError) {
    let holds = try condition()
    precondition(holds, message)
}
// snippet.show

// snippet.state
import SpindleAtoms

struct CounterAtom: StateAtom, Hashable {
    func defaultValue(context: Context) -> Int { 0 }
}
// snippet.end

// snippet.derived
struct DoubledAtom: ValueAtom, Hashable {
    func value(context: Context) throws(AtomError) -> Int {
        // snippet.hide
        counted("doubled")
        // snippet.show
        return try context.watch(CounterAtom()) * 2
    }
}

// Watches the counter and the doubled counter: a diamond. A set of the
// counter computes it once, after DoubledAtom: never from a stale value.
struct SummaryAtom: ValueAtom, Hashable {
    func value(context: Context) throws(AtomError) -> String {
        // snippet.hide
        counted("summary")
        // snippet.show
        let count = try context.watch(CounterAtom())
        let doubled = try context.watch(DoubledAtom())
        return "\(count) × 2 = \(doubled)"
    }
}
// snippet.end

// snippet.store
let store = AtomStore()

// A watch: the callback gets each new value, and the subscription keeps
// the atom (and what it watches) in use until it is cancelled.
let doubled = try store.watch(DoubledAtom()) { value in
    print("doubled:", value)
    // snippet.hide
    hear("doubled: \(value)")
    // snippet.show
}
let start: Int = doubled.initialValue          // 0

try store.set(3, for: CounterAtom())           // "doubled: 6", before set returns
try store.modify(CounterAtom()) { $0 += 1 }    // "doubled: 8"
print(try store.read(DoubledAtom()))           // 8: a read does not watch

doubled.cancel()                               // the last watch: both atoms are released
// snippet.end

// snippet.hide
precondition(start == 0, "the watch began with 0")
precondition(takeHeard() == ["doubled: 6", "doubled: 8"], "the watcher heard each value, before each set returned")
// Released with the last watch: the counter starts again from its default.
try expect(store.read(CounterAtom()) == 0, "the counter was released")
// A state atom set while nothing watches it is released right after.
try store.set(5, for: CounterAtom())
try expect(store.read(CounterAtom()) == 0, "an unwatched set is released at once")

// Glitch-free: one set recomputes the diamond's bottom once, after
// DoubledAtom, and its watcher never sees a stale doubled value.
let summary = try store.watch(SummaryAtom()) { line in hear(line) }
precondition(summary.initialValue == "0 × 2 = 0")
let summaries = computed("summary")
try store.set(7, for: CounterAtom())
precondition(computed("summary") == summaries + 1, "the bottom of the diamond computed once")
precondition(takeHeard() == ["7 × 2 = 14"], "one consistent value")

// Minimal: an equal value stops the propagation at the counter.
let doubles = computed("doubled")
try store.set(7, for: CounterAtom())
precondition(computed("doubled") == doubles && computed("summary") == summaries + 1, "an equal value recomputes nothing")
precondition(takeHeard().isEmpty, "and calls no watcher")
summary.cancel()
try expect(store.snapshot().count == 0, "every atom released")
// snippet.show

// snippet.select
struct Profile: Equatable, Sendable {
    var name: String
    var visits: Int
}

struct ProfileAtom: StateAtom, Hashable {
    func defaultValue(context: Context) -> Profile { Profile(name: "Ada", visits: 0) }
}

// Told only when the name changes, not at every visit.
let name = try store.watch(ProfileAtom().select(\.name)) { name in
    print("name:", name)
    // snippet.hide
    hear("name: \(name)")
    // snippet.show
}
try store.modify(ProfileAtom()) { $0.visits += 1 }      // nothing printed
try store.modify(ProfileAtom()) { $0.name = "Grace" }   // "name: Grace"
// snippet.end

// snippet.hide
precondition(name.initialValue == "Ada")
precondition(takeHeard() == ["name: Grace"], "the selection changed once")
name.cancel()
try expect(store.snapshot().count == 0, "every atom released")
// snippet.show

#if canImport(Observation)
// snippet.observation
import Observation

let counter = try store.observable(CounterAtom())   // watches the atom while it lives

withObservationTracking {
    print("count:", counter.value)       // read here, as a SwiftUI body reads it
} onChange: {
    print("the count is changing")       // once: at the next change
    // snippet.hide
    hear("changing")
    // snippet.show
}
try store.set(1, for: CounterAtom())     // "the count is changing"
print("count:", counter.value)           // count: 1
// snippet.end
// snippet.hide
precondition(takeHeard() == ["changing"], "the tracker heard the change")
precondition(counter.value == 1)
try store.set(1, for: CounterAtom())
try store.set(2, for: CounterAtom())
precondition(takeHeard().isEmpty && counter.value == 2, "once only")
// snippet.show
#endif

// snippet.hide

// Bad use: a cycle is thrown by the operation that finds it.
struct PingAtom: ValueAtom, Hashable {
    func value(context: Context) throws(AtomError) -> Int { try context.watch(PongAtom()) }
}
struct PongAtom: ValueAtom, Hashable {
    func value(context: Context) throws(AtomError) -> Int { try context.watch(PingAtom()) }
}
do throws(AtomError) {
    _ = try store.read(PingAtom())
    preconditionFailure("a cycle must be refused")
} catch {
    guard case .cycle(let path) = error else { preconditionFailure("not a cycle: \(error)") }
    precondition(path.count == 3 && path.first == path.last, "the path closes: \(path)")
}
try expect(store.snapshot().value(of: PingAtom()) == nil, "the failed atoms are not kept")
try expect(store.snapshot().value(of: PongAtom()) == nil, "the failed atoms are not kept")

// A cycle found while propagating goes to the observers and the logger;
// the atom keeps its value.
struct FlagAtom: StateAtom, KeepAlive, Hashable {
    func defaultValue(context: Context) -> Bool { false }
}
struct LeftAtom: ValueAtom, Hashable {
    func value(context: Context) throws(AtomError) -> Int {
        guard try context.watch(FlagAtom()) else { return 1 }
        return try context.watch(RightAtom()) + 1
    }
}
struct RightAtom: ValueAtom, Hashable {
    func value(context: Context) throws(AtomError) -> Int { try context.watch(LeftAtom()) + 1 }
}
struct FailureWatch: AtomObserver {
    func atomFailed(_ error: AtomError) { hear("failed: \(error)") }
}
var quiet = Logger(label: "atoms")
quiet.logLevel = .critical
let observed = AtomStore(observers: [FailureWatch()], logger: quiet)
let right = try observed.watch(RightAtom()) { _ in hear("right changed") }
precondition(right.initialValue == 2)
try observed.set(true, for: FlagAtom())
let failures = takeHeard()
precondition(failures.count == 1 && failures[0].hasPrefix("failed: SpindleAtoms: dependency cycle"), "\(failures)")
try expect(observed.read(LeftAtom()) == 1, "the atom that found the cycle keeps its value")
try expect(observed.read(RightAtom()) == 2, "and what watches it was not recomputed")

// A set inside a computation is applied after the update in progress.
struct LastComputedAtom: StateAtom, KeepAlive, Hashable {
    func defaultValue(context: Context) -> String { "none" }
}
struct NoisyAtom: ValueAtom, Hashable {
    func value(context: Context) throws(AtomError) -> Int {
        try context.set("noisy", for: LastComputedAtom())
        try expect(context.read(LastComputedAtom()) == "none", "not applied inside the computation")
        return 1
    }
}
_ = try observed.read(NoisyAtom())
try expect(observed.read(LastComputedAtom()) == "noisy", "applied once the operation's update was done")
right.cancel()
observed.close()
// snippet.show

// snippet.spin
import Spindle

enum CounterEvent: Sendable { case increment, decrement }

struct CounterLoopAtom: SpinAtom, Hashable {
    func spin(context: Context) -> Spin<Int, CounterEvent> {
        Spin(initialState: 0, feedbacks: [], reducer: Reducer { count, event in
            switch event {
            case .increment: count + 1
            case .decrement: count - 1
            }
        })
    }
}

let counts = try store.values(of: CounterLoopAtom())   // the first use starts the loop
store.emit(.increment, to: CounterLoopAtom())
store.emit(.increment, to: CounterLoopAtom())
for await count in counts where count == 2 {
    print("the loop counted to", count)
    break
}
// snippet.hide
guard let loop = store.loop(of: CounterLoopAtom()) else { preconditionFailure("the loop runs while the atom is in use") }
// snippet.show

store.close()   // releases every atom: the loop stops, draining what it accepted
// snippet.end

// snippet.hide
let report = await loop.stop()
precondition(loop.isStopped && report.reduced == 2, "the loop stopped with a drain: \(report)")
precondition(store.emit(.increment, to: CounterLoopAtom()) == .stopped, "no loop after close")
do throws(AtomError) {
    _ = try store.read(CounterAtom())
    preconditionFailure("a closed store refuses operations")
} catch {
    precondition(error == .storeClosed)
}
// snippet.show
