import Dispatch
import Spindle
import Synchronization

/// One place in the soak: the loop running there now.
final class SoakSlot: Sendable {
    let current: Mutex<SoakLoop>
    init(_ loop: SoakLoop) { current = Mutex(loop) }
}

/// The soak's loops, their gears and queues, and the totals.
final class SoakWorld: Sendable {
    static let gears = 8

    let producers: Int
    let slots: [SoakSlot]
    let gears: [Gear<SoakPulse>]
    /// The renderers' serial queues, on the global (not overcommit) queue's
    /// threads. A queue made with a label alone is overcommit: while the
    /// soak keeps both cores busy, libdispatch adds a worker each time it
    /// finds its workers stalled, and each worker it adds keeps its freed
    /// continuations (one per `async`), up to 80 KiB, until it exits. The
    /// heap check would then measure libdispatch's thread pool rather than
    /// Spindle (CONTRIBUTING.md, "The soak").
    let renderQueues: [DispatchQueue]
    let acceptedTotal = SoakCount()
    let reducedTotal: SoakCount
    let backlog: SoakBacklog
    private let generations: SoakCount

    init(loops: Int, producers: Int) {
        self.producers = producers
        let gears = (0..<Self.gears).map { _ in Gear<SoakPulse>() }
        let renderQueues = (0..<Self.gears).map { DispatchQueue(label: "soak.render.\($0)", target: .global()) }
        let reducedTotal = SoakCount()
        let backlog = SoakBacklog()
        let generations = SoakCount()
        self.gears = gears
        self.renderQueues = renderQueues
        self.reducedTotal = reducedTotal
        self.backlog = backlog
        self.generations = generations
        slots = (0..<loops).map { _ in
            SoakSlot(Self.makeLoop(producers: producers, gears: gears, renderQueues: renderQueues,
                                   reducedTotal: reducedTotal, backlog: backlog, generations: generations))
        }
    }

    private func makeLoop() -> SoakLoop {
        Self.makeLoop(producers: producers, gears: gears, renderQueues: renderQueues,
                      reducedTotal: reducedTotal, backlog: backlog, generations: generations)
    }

    private static func makeLoop(
        producers: Int, gears: [Gear<SoakPulse>], renderQueues: [DispatchQueue],
        reducedTotal: SoakCount, backlog: SoakBacklog, generations: SoakCount
    ) -> SoakLoop {
        generations.add()
        let generation = generations.current
        return SoakLoop(
            generation: generation, producers: producers, gear: gears[generation % gears.count],
            renderQueue: renderQueues[generation % renderQueues.count],
            conflatedRendering: generation % 2 == 0, reducedTotal: reducedTotal, backlog: backlog)
    }

    /// The loop at `slot`, counted in flight until the caller calls `done()` on it.
    func borrow(slot: Int) -> SoakLoop {
        slots[slot].current.withLock { loop in
            loop.inFlight.add()
            return loop
        }
    }

    /// Starts a new loop at `slot`; returns the one it replaces (still running).
    func replace(slot: Int) -> SoakLoop {
        let next = makeLoop()
        return slots[slot].current.withLock { loop in
            defer { loop = next }
            return loop
        }
    }

    /// Every loop running now.
    func all() -> [SoakLoop] { slots.map { $0.current.withLock { $0 } } }

    /// Stops a loop no producer can pick any more and checks its books.
    /// - Returns: what did not balance (empty when all did).
    static func retire(_ old: SoakLoop, into coverage: SoakCoverage) async -> [String] {
        await old.loop.stop()
        old.forgiveUnrenderedStates()
        // Producers that picked it before the replacement finish their emit
        // (answered .stopped at worst); tasks cancelled by the stop and gear
        // deliveries already under way still hand their echoes to the
        // engine, which counts each as discarded or refused. So the books
        // may need a moment to balance; they never balance by accident, and
        // an imbalance that lasts is a lost or invented event.
        let deadline = ContinuousClock.now + .seconds(10)
        var imbalance = old.inFlight.current == 0 ? old.imbalance() : "producers still emitting"
        while imbalance != nil, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(1))
            imbalance = old.inFlight.current == 0 ? old.imbalance() : "producers still emitting"
        }
        coverage.count(old)
        return imbalance.map { ["loop \(old.generation): \($0)"] } ?? []
    }
}

/// What the loops owe, all together: items accepted and not yet reduced,
/// and states of every-state renderers' loops reduced and not yet rendered.
/// The producers pace on it: on a machine slower than the offered rate (a
/// loaded CI machine), the work would pile up in queues and mailboxes, as
/// their contract says it must (nothing is dropped), and the RSS check
/// would measure overload rather than leaks.
final class SoakBacklog: Sendable {
    /// Most items owed before the producers wait (50 ms at the default rate).
    static let itemLimit = 10_000
    /// Most renders owed before the producers wait.
    static let renderLimit = 10_000

    let items = SoakCount()
    let renders = SoakCount()
    /// Microseconds the producers waited for the loops, in all.
    let waited = SoakCount()

    var isOverLimit: Bool { items.current > Self.itemLimit || renders.current > Self.renderLimit }
}

/// How much of each path the checked loops took, summed: a soak whose
/// books balance only because no echo was ever discarded or refused, or no
/// run ever cancelled, proves less than it seems.
final class SoakCoverage: Sendable {
    let echoesReduced = SoakCount()
    let lateEchoesDiscarded = SoakCount()
    let echoesRefusedAfterStop = SoakCount()
    let itemsRefusedAfterStop = SoakCount()
    let runsStarted = SoakCount()
    let runsCancelled = SoakCount()

    func count(_ loop: SoakLoop) {
        let statistics = loop.loop.statistics
        echoesReduced.add(Int(loop.loop.state.echoes))
        lateEchoesDiscarded.add(statistics.lateEventsDiscarded)
        echoesRefusedAfterStop.add(statistics.rejectedAfterStop - loop.rejected.current)
        itemsRefusedAfterStop.add(loop.rejected.current)
        runsStarted.add(statistics.effectRunsStarted)
        runsCancelled.add(statistics.effectRunsCancelled)
    }

    var description: String {
        "\(echoesReduced.current) echoes reduced, \(lateEchoesDiscarded.current) discarded as late, "
            + "\(echoesRefusedAfterStop.current) refused after stop; \(itemsRefusedAfterStop.current) items refused after stop; "
            + "\(runsStarted.current) effect runs started, \(runsCancelled.current) cancelled"
    }
}
