import Spindle
import SpindleAtoms
import SpindleTestSupport
import Testing

/// A task atom that answers its source's value doubled once `gate` opens.
struct Doubled: TaskAtom, Hashable {
    let gate: OpenOnce
    func value(context: Context) async -> Int {
        let source = (try? context.watch(Source(id: 0))) ?? -1
        await gate.wait()
        return source * 2
    }
    static func == (lhs: Doubled, rhs: Doubled) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}

struct Failing: ThrowingTaskAtom, Hashable {
    struct Refused: Error, Equatable {}
    func value(context: Context) async throws -> Int { throw Refused() }
}

/// Waits for the first value of `values` that `accept` takes.
func first<Value: Sendable>(_ values: AsyncStream<Value>, where accept: (Value) -> Bool) async -> Value? {
    for await value in values where accept(value) { return value }
    return nil
}

@Suite struct AsyncAtomTests {
    @Test func aTaskAtomsPhaseGoesFromSuspendingToItsValue() async throws {
        let gate = OpenOnce()
        let store = AtomStore()
        try store.set(0, for: Source(id: 0))
        let keep = try store.watch(Source(id: 0)) { _ in }
        try store.set(21, for: Source(id: 0))
        let phases = try store.values(of: Doubled(gate: gate).phase)
        var iterator = phases.makeAsyncIterator()
        #expect(await iterator.next()?.isSuspending == true)
        gate.open()
        #expect(await iterator.next()?.value == 42)
        keep.cancel()
    }

    @Test func aThrowingTaskAtomEndsInFailure() async throws {
        let store = AtomStore()
        let phase = await first(try store.values(of: Failing().phase)) { !$0.isSuspending }
        #expect(phase?.error is Failing.Refused)
    }

    @Test func recomputingATaskAtomCancelsItsTask() async throws {
        struct Forever: TaskAtom, Hashable {
            func value(context: Context) async -> Bool {
                _ = try? context.watch(Source(id: 0))
                while !Task.isCancelled { await Task.yield() }
                return true
            }
        }
        let store = AtomStore()
        let subscription = try store.watch(Forever()) { _ in }
        let firstTask = subscription.initialValue!
        let watched = await eventually { (try? store.snapshot().value(of: Source(id: 0))) != nil }
        #expect(watched)
        try store.set(1, for: Source(id: 0))  // the task's late watch recomputes the atom
        #expect(await firstTask.value)
        subscription.cancel()
    }

    @Test func releasingATaskAtomCancelsItsTask() async throws {
        struct Forever: TaskAtom, Hashable {
            func value(context: Context) async -> Bool {
                while !Task.isCancelled { await Task.yield() }
                return true
            }
        }
        let store = AtomStore()
        let subscription = try store.watch(Forever()) { _ in }
        let task = subscription.initialValue!
        subscription.cancel()
        #expect(await task.value)
    }

    @Test func anAsyncSequenceAtomFollowsItsSequence() async throws {
        struct Numbers: AsyncSequenceAtom, Hashable {
            let stream: AsyncStream<Int>
            func sequence(context: Context) -> AsyncStream<Int> { stream }
            static func == (lhs: Numbers, rhs: Numbers) -> Bool { true }
            func hash(into hasher: inout Hasher) {}
        }
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let store = AtomStore()
        let values = try store.values(of: Numbers(stream: stream))
        var iterator = values.makeAsyncIterator()
        #expect(await iterator.next()?.isSuspending == true)
        continuation.yield(1)
        #expect(await iterator.next()?.value == 1)
        continuation.yield(2)
        #expect(await iterator.next()?.value == 2)
        continuation.finish()
    }

    @Test func aSpinAtomRunsItsLoopWhileInUseAndWatchersSeeItsFinalState() async throws {
        let store = AtomStore()
        let values = try store.values(of: Counting())
        #expect(store.emit(0, to: Counting()) == .accepted)
        for _ in 0..<999 { _ = store.emit(1, to: Counting()) }
        #expect(store.emit(1, to: Counting()) == .accepted)
        #expect(await first(values) { $0 == 1_000 } == 1_000)
        let loop = try #require(store.loop(of: Counting()))
        // Derived from the loop, through select.
        struct Decade: ValueAtom, Hashable {
            func value(context: Context) throws(AtomError) -> Int { try context.watch(Counting()) / 10 }
        }
        #expect(try store.read(Decade()) == 100)
        withExtendedLifetime(values) {}
        // The values sequence ends with its iterator above; cancel what is left.
        store.close()
        #expect(await eventually { loop.isStopped })
    }

    /// Unpaced (each latest state taken as soon as the last is in) and paced
    /// to a thousandth of a core: either way, watchers get to every state the
    /// loop ends a burst on, in increasing order.
    @Test(arguments: [1.0, 0.001])
    func aSpinAtomsWatchersReachEachBurstsLastStateWhateverItsIntakeLoad(load: Double) async throws {
        struct Paced: SpinAtom, Hashable {
            let maximumIntakeLoad: Double
            func spin(context: Context) -> Spin<Int, Int> {
                Spin(initialState: 0, feedbacks: [], reducer: Reducer { state, event in state + event })
            }
        }
        let atom = Paced(maximumIntakeLoad: load)
        let store = AtomStore()
        let seen = Recorder<Int>()
        let values = try store.values(of: atom)
        var iterator = values.makeAsyncIterator()
        for burst in 1...3 {
            for _ in 0..<1_000 { #expect(store.emit(1, to: atom) == .accepted) }
            while let value = await iterator.next() {
                seen.append(value)
                if value == burst * 1_000 { break }
            }
        }
        #expect(zip(seen.values, seen.values.dropFirst()).allSatisfy { $0 < $1 })
        #expect(seen.values.last == 3_000)
        store.close()
    }

    @Test func aSpinAtomIsStoppedWhenReleased() async throws {
        let store = AtomStore()
        let subscription = try store.watch(Counting()) { _ in }
        let loop = try #require(store.loop(of: Counting()))
        subscription.cancel()
        #expect(await eventually { loop.isStopped })
        #expect(store.emit(1, to: Counting()) == .stopped)
        #expect(store.loop(of: Counting()) == nil)
    }
}

@Suite struct LateDependencyTests {
    /// Watches its city only from inside the task.
    struct Weather: TaskAtom, Hashable {
        func value(context: Context) async -> String {
            let city = (try? context.watch(City())) ?? "?"
            return city.isEmpty ? "no city" : "sunny in \(city)"
        }
    }

    struct City: StateAtom, Hashable {
        func defaultValue(context: Context) -> String { "Paris" }
    }

    @Test func aSetThatRecomputesATaskAtomIsNotLostWithTheTasksLateWatch() async throws {
        let store = AtomStore()
        let phases = try store.values(of: Weather().phase)
        #expect(await first(phases) { $0.value == "sunny in Paris" } != nil)
        // The old task's watch keeps City in use while the new task starts.
        try store.set("", for: City())
        #expect(await first(phases) { $0.value == "no city" } != nil)
        try store.set("Oslo", for: City())
        #expect(await first(phases) { $0.value == "sunny in Oslo" } != nil)
    }
}
