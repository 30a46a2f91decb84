import Spindle
import SpindleAtoms
import SpindleTestSupport
import Testing

/// A state atom per producer thread.
private struct Lane: StateAtom, Hashable {
    let id: Int
    func defaultValue(context: Context) -> Int { 0 }
}

/// Twice a lane's value, holding a probe while it lives.
private struct Doubled: ValueAtom, Hashable {
    let id: Int
    let probes: ReleaseProbes
    func value(context: Context) throws(AtomError) -> Int {
        context.keepUntilTermination(probes.probe())
        return try context.watch(Lane(id: id)) * 2
    }
    static func == (lhs: Doubled, rhs: Doubled) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// The sum of every lane's value.
private struct Total: ValueAtom, Hashable {
    let lanes: Int
    let probes: ReleaseProbes
    func value(context: Context) throws(AtomError) -> Int {
        context.keepUntilTermination(probes.probe())
        var sum = 0
        for id in 0..<lanes { sum += try context.watch(Lane(id: id)) }
        return sum
    }
    static func == (lhs: Total, rhs: Total) -> Bool { lhs.lanes == rhs.lanes }
    func hash(into hasher: inout Hasher) { hasher.combine(lanes) }
}

/// A derived atom the churn threads watch and release.
private struct Churned: ValueAtom, Hashable {
    let id: Int
    let lane: Int
    let probes: ReleaseProbes
    func value(context: Context) throws(AtomError) -> Int {
        context.keepUntilTermination(probes.probe())
        return try context.watch(Lane(id: lane)) + id
    }
    static func == (lhs: Churned, rhs: Churned) -> Bool { lhs.id == rhs.id && lhs.lane == rhs.lane }
    func hash(into hasher: inout Hasher) { hasher.combine(id); hasher.combine(lane) }
}

private struct Tally: StateAtom, Hashable {
    func defaultValue(context: Context) -> Int { 0 }
}

/// A loop that adds what it is sent.
private struct Adder: SpinAtom, Hashable {
    func spin(context: Context) -> Spin<Int, Int> {
        Spin(initialState: 0, feedbacks: [], reducer: Reducer { $0 + $1 })
    }
}

extension StressSuite {
    /// Issue 50: an atom store used from many threads at once. Producers
    /// set their own lanes while churn threads watch and release derived
    /// atoms: every watcher sees every change it was watching, in order,
    /// the total sees every sum exactly once (updates are serialized), no
    /// callback starts after its cancel returned, and every atom is
    /// released at the end.
    @Suite("Atom store under Thread Sanitizer")
    struct AtomStoreStressTests {
        @Test("concurrent sets, watches and releases: every change seen in order, nothing after release, everything freed")
        func concurrentSetsWatchesAndReleases() async throws {
            let producers = 3
            let perProducer = StressScale.rounds * 400
            let churners = 2
            let probes = ReleaseProbes()
            let store = AtomStore()
            let laneValues = (0..<producers).map { _ in Recorder<Int>() }
            let totals = Recorder<Int>()
            var subscriptions: [AtomSubscription<Int>] = []
            for id in 0..<producers {
                let values = laneValues[id]
                subscriptions.append(try store.watch(Doubled(id: id, probes: probes)) { values.append($0) })
            }
            subscriptions.append(try store.watch(Total(lanes: producers, probes: probes)) { totals.append($0) })
            let lateCalls = Recorder<Counter>()
            let failures = Recorder<String>()
            let finished = await onThreads(producers + churners) { index in
                if index < producers {
                    for value in 1...perProducer {
                        do { try store.set(value, for: Lane(id: index)) } catch { failures.append("set: \(error)") }
                    }
                    return
                }
                let churner = index - producers
                var round = 0
                while round < perProducer / 4 {
                    let cancelled = Counter()
                    let late = Counter()
                    let atom = Churned(id: round % 7, lane: (churner + round) % producers, probes: probes)
                    do {
                        let subscription = try store.watch(atom) { _ in
                            if cancelled.current > 0 { _ = late.add() }
                        }
                        subscription.cancel()
                        _ = cancelled.add()
                        lateCalls.append(late)
                    } catch {
                        failures.append("watch: \(error)")
                    }
                    round += 1
                }
            }
            #expect(finished)
            #expect(failures.values.isEmpty)
            for id in 0..<producers {
                #expect(laneValues[id].values == (1...perProducer).map { $0 * 2 }, "lane \(id): every change, in order")
            }
            #expect(totals.values == Array(1...(producers * perProducer)), "the total: every sum once, in order")
            // A call already past its check when cancel returned may finish
            // after it; none may start later: at most one per watcher.
            #expect(lateCalls.values.allSatisfy { $0.current <= 1 })
            for subscription in subscriptions { subscription.cancel() }
            #expect(try store.snapshot().count == 0)
            #expect(probes.live == 0)
        }

        @Test("a watcher cancelled while another thread sets is not called afterwards")
        func noDeliveryAfterRelease() async throws {
            let store = AtomStore()
            let rounds = StressScale.rounds * 200
            let keep = try store.watch(Tally()) { _ in }
            let afterRelease = Recorder<Counter>()
            let finished = await onThreads(2) { index in
                if index == 0 {
                    for value in 1...rounds { try? store.set(value, for: Tally()) }
                    return
                }
                for _ in 0..<rounds / 4 {
                    let released = Counter()
                    let late = Counter()
                    guard let subscription = try? store.watch(Tally(), onUpdate: { _ in
                        if released.current > 0 { _ = late.add() }
                    }) else { continue }
                    subscription.cancel()
                    _ = released.add()
                    afterRelease.append(late)
                }
            }
            #expect(finished)
            // A call already past its check when cancel returned may finish
            // after it; queued deliveries must not start: at most one each.
            #expect(afterRelease.values.allSatisfy { $0.current <= 1 })
            keep.cancel()
            #expect(try store.snapshot().count == 0)
        }

        @Test("a spin atom flooded from two threads: its watchers end on its final state")
        func floodedSpinAtom() async throws {
            let store = AtomStore()
            let perProducer = StressScale.rounds * 20_000
            let probes = ReleaseProbes()
            struct Half: ValueAtom, Hashable {
                func value(context: Context) throws(AtomError) -> Int { try context.watch(Adder()) / 2 }
            }
            let seen = Recorder<Int>()
            let subscription = try store.watch(Half()) { seen.append($0) }
            let accepted = Counter()
            let finished = await onThreads(2) { _ in
                for _ in 0..<perProducer where store.emit(1, to: Adder()) == .accepted { _ = accepted.add() }
            }
            #expect(finished)
            #expect(accepted.current == 2 * perProducer)
            let final = perProducer  // 2 × perProducer / 2
            #expect(await eventually { seen.values.last == final })
            let values = seen.values
            #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 }, "conflated, but in order")
            let loop = try #require(store.loop(of: Adder()))
            subscription.cancel()
            #expect(await eventually { loop.isStopped })
            #expect(loop.state == 2 * perProducer)
            #expect(probes.live == 0)
            #expect(try store.snapshot().count == 0)
        }
    }
}
