import Dispatch
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport

// Effects as data under load (issue 6): producer threads emit items whose
// reductions produce effects; the router's handlers (sync, async, emitting)
// emit events back; some effects match no route.

enum RelayEvent: Sendable {
    case item(Stamped)
    /// From the sync `.echo` route: one per item, per producer in order.
    case echoed(Stamped)
    /// From the async `.answer` route (every 4th item): any order.
    case answered(Stamped)
    /// From the emitting `.burst` route (every 64th item): three parts.
    case burstPart(Stamped)
}

enum RelayEffect: Sendable {
    case echo(Stamped)
    case answer(Stamped)
    case burst(Stamped)
    /// Every 256th item: no route matches it.
    case lost(Stamped)
}

/// Which effects item `sequence` makes, in order.
func relayEffects(for item: Stamped) -> [RelayEffect] {
    var effects: [RelayEffect] = [.echo(item)]
    if item.sequence % 4 == 0 { effects.append(.answer(item)) }
    if item.sequence % 64 == 0 { effects.append(.burst(item)) }
    if item.sequence % 256 == 0 { effects.append(.lost(item)) }
    return effects
}

/// The reducer and its reducer-thread-only checks: items and echoes arrive
/// per producer in strictly increasing order (with `contiguous`, no gaps).
final class RelayChecker: @unchecked Sendable {
    // @unchecked: the fields are touched by the reducer thread only while the
    // loop runs, and read by the test after `stop()`.
    let contiguous: Bool
    private(set) var lastItem: [Int]
    private(set) var lastEcho: [Int]
    private(set) var items = 0
    private(set) var echoes = 0
    private(set) var answers = 0
    private(set) var burstParts = 0
    private(set) var outOfOrder = 0
    private(set) var gaps = 0
    /// Handler events reduced so far, for the test to wait on.
    let handlerEvents = Counter()

    init(producers: Int, contiguous: Bool) {
        self.contiguous = contiguous
        lastItem = Array(repeating: -1, count: producers)
        lastEcho = Array(repeating: -1, count: producers)
    }

    private func check(_ stamp: Stamped, against last: inout [Int]) {
        if stamp.sequence <= last[stamp.producer] { outOfOrder += 1 }
        if contiguous, stamp.sequence != last[stamp.producer] + 1 { gaps += 1 }
        last[stamp.producer] = stamp.sequence
    }

    func next(_ state: Int, _ event: RelayEvent) -> Next<Int, RelayEffect> {
        switch event {
        case .item(let item):
            check(item, against: &lastItem)
            items += 1
            return .next(state + 1, effects: relayEffects(for: item))
        case .echoed(let item):
            check(item, against: &lastEcho)
            echoes += 1
        case .answered:
            answers += 1
        case .burstPart:
            burstParts += 1
        }
        handlerEvents.add()
        return .next(state + 1)
    }
}

/// What the handlers did, counted where they run.
final class RelayLedger: Sendable {
    let burstsStarted = Counter()
    let burstAccepted = Counter()
    let burstRejected = Counter()
    let unhandledReported = Counter()
    let otherErrors = Counter()

    func router(echoQueue: DispatchQueue) -> EffectRouter<RelayEffect, RelayEvent> {
        EffectRouter<RelayEffect, RelayEvent>()
            .route({ effect -> Stamped? in if case .echo(let item) = effect { item } else { nil } }, on: echoQueue) {
                .echoed($0)
            }
            .route({ effect -> Stamped? in if case .answer(let item) = effect { item } else { nil } }) { item async in
                await Task.yield()
                return .answered(item)
            }
            .route({ effect -> Stamped? in if case .burst(let item) = effect { item } else { nil } },
                   emitting: { [self] item, emitter in
                       burstsStarted.add()
                       for _ in 0..<3 {
                           if emitter.emit(.burstPart(item)) == .accepted {
                               burstAccepted.add()
                           } else {
                               burstRejected.add()
                               return
                           }
                       }
                   })
    }

    func countError(_ error: EffectError) {
        if error.underlying is UnhandledEffectError { unhandledReported.add() } else { otherErrors.add() }
    }
}

/// Returns once every block queued on `queue` before the call has run.
func flush(_ queue: DispatchQueue) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        queue.async { continuation.resume() }
    }
}

extension StressSuite {
    @Suite("Effect router")
    struct EffectRouterStressTests {
        @Test("every effect is handled or counted, every handler event reduced in order", arguments: stressQueues)
        func effectsUnderLoadAreAllHandledAndTheirEventsReducedInOrder(queue: QueueKind) async throws {
            let baseline = await LiveBaseline.settle()
            do {
                let producers = 4
                let perProducer = max(500, StressScale.eventsPerQueue / 4_000)
                let checker = RelayChecker(producers: producers, contiguous: true)
                let ledger = RelayLedger()
                let loop = try Spin(initialState: 0) {
                    Reducer(checker.next, effects: ledger.router(echoQueue: DispatchQueue(label: "echo")))
                }.start(options: SpinOptions(queue: queue, onEffectError: ledger.countError))
                let tallies = Locked<[ProducerTally]>([])
                let finished = await onThreads(producers) { producer in
                    var tally = ProducerTally(producer: producer)
                    for sequence in 0..<perProducer {
                        tally.count(loop.emit(.item(Stamped(producer: producer, sequence: sequence))), sequence: sequence)
                    }
                    tallies.withLock { $0.append(tally) }
                }
                #expect(finished, "producers did not finish: a hang")
                let perItem = (0..<perProducer).map { relayEffects(for: Stamped(producer: 0, sequence: $0)) }
                let effects = perItem.map(\.count).reduce(0, +) * producers
                let answers = (0..<perProducer).filter { $0 % 4 == 0 }.count * producers
                let bursts = (0..<perProducer).filter { $0 % 64 == 0 }.count * producers
                let lost = (0..<perProducer).filter { $0 % 256 == 0 }.count * producers
                let handlerEvents = perProducer * producers + answers + 3 * bursts
                let settled = await eventually {
                    checker.handlerEvents.current == handlerEvents && ledger.unhandledReported.current == lost
                }
                #expect(settled, "handler events \(checker.handlerEvents.current) of \(handlerEvents), unhandled \(ledger.unhandledReported.current) of \(lost)")
                await baseline.expectEffectTasksEnded()
                let report = await loop.stop()
                let statistics = loop.statistics
                let accepted = tallies.withLock { $0.map(\.accepted).reduce(0, +) }

                #expect(accepted == perProducer * producers)
                #expect(checker.items == accepted, "an accepted item was not reduced")
                #expect(report.reduced == accepted + handlerEvents)
                #expect(checker.outOfOrder == 0 && checker.gaps == 0, "items or echoes out of order, or a gap")
                #expect(checker.echoes == accepted && checker.answers == answers && checker.burstParts == 3 * bursts)
                #expect(statistics.effectsDispatched == effects)
                #expect(statistics.effectsHandled == effects - lost)
                #expect(statistics.unhandledEffects == lost && statistics.effectsDiscardedAtStop == 0)
                #expect(ledger.otherErrors.current == 0 && ledger.burstRejected.current == 0)
                #expect(statistics.lateEventsDiscarded == 0 && statistics.rejectedAfterStop == 0)
                reportTotal("effect-router", queue: name(of: queue), statistics.effectsDispatched)
            }
            await baseline.expectReturned()
        }

        @Test("stopping while effects flow: each one handled, unhandled or discarded; each handler event reduced or rejected",
              arguments: stressQueues)
        func stoppingWhileEffectsFlowLosesNothing(queue: QueueKind) async throws {
            let baseline = await LiveBaseline.settle()
            var discardedEffects = 0
            var stoppedAnswers = 0
            // The premise: some stop found effects pending. A run whose
            // stops all came after the echo queue had caught up (a loaded
            // machine can do that) proves nothing about the race, so the
            // rounds go on, at most 20 more, until one has (as
            // `raceRounds` does); every round's own checks run either way.
            var round = 0
            while round < StressScale.rounds || (discardedEffects == 0 && round < StressScale.rounds + 20) {
                defer { round += 1 }
                let producers = 3
                let perProducer = max(1_000, StressScale.eventsPerQueue / 5_000)
                let checker = RelayChecker(producers: producers, contiguous: false)
                let ledger = RelayLedger()
                let mode: StopMode = round % 2 == 0 ? .drain : .discardPending
                let echoQueue = DispatchQueue(label: "echo")
                let loop = try Spin(initialState: 0) {
                    Reducer(checker.next, effects: ledger.router(echoQueue: echoQueue))
                }.start(options: SpinOptions(queue: queue, onEffectError: ledger.countError))
                let tallies = Locked<[ProducerTally]>([])
                async let produced = onThreads(producers) { producer in
                    var tally = ProducerTally(producer: producer)
                    for sequence in 0..<perProducer {
                        tally.count(loop.emit(.item(Stamped(producer: producer, sequence: sequence))), sequence: sequence)
                    }
                    tallies.withLock { $0.append(tally) }
                }
                // Stop once effects are flowing, while the producers still run.
                _ = await eventually(within: 30) { checker.handlerEvents.current >= 1 }
                // Hold the echo route's queue across the stop, so that echo
                // effects dispatched meanwhile are still waiting for their
                // handler when the loop finishes: the race is exercised in
                // every round, however fast the queue keeps up. Released
                // once the loop has stopped (or after 10 s, should the stop
                // ever wait for the route's queue).
                let held = DispatchSemaphore(value: 0)
                echoQueue.async { _ = held.wait(timeout: .now() + 10) }
                let report = await loop.stop(mode)
                held.signal()
                #expect(await produced, "producers did not finish: a hang")
                // Handlers running at stop may still be emitting: wait for the
                // echo route's queue to pass them, and for the tasks to end.
                await flush(echoQueue)
                await baseline.expectEffectTasksEnded()
                let effectsSettled = await eventually {
                    let s = loop.statistics
                    return s.effectsDispatched == s.effectsHandled + s.effectsDiscardedAtStop + s.unhandledEffects
                        && ledger.unhandledReported.current == s.unhandledEffects
                }
                let statistics = loop.statistics
                let tally = tallies.withLock { $0 }
                let accepted = tally.map(\.accepted).reduce(0, +)
                let stoppedThisRound = tally.map(\.stopped).reduce(0, +)

                #expect(effectsSettled, "round \(round): \(statistics)")
                #expect(tally.allSatisfy { $0.answeredAfterStopped == 0 }, "an emit accepted after a .stopped")
                #expect(checker.outOfOrder == 0, "round \(round): items or echoes out of order")
                #expect(checker.items <= accepted)
                if mode == .drain { #expect(checker.items == accepted, "round \(round): an accepted item lost") }
                #expect(report.reduced == checker.items + checker.handlerEvents.current)
                // Each handled sync or async effect emits one event; bursts
                // count theirs. Every handler event is accepted or rejected
                // (late, or at the loop's closed gate: the producers' .stopped
                // answers are the rest of rejectedAfterStop) ...
                let singleHandled = statistics.effectsHandled - ledger.burstsStarted.current
                let handlerEmits = singleHandled + ledger.burstAccepted.current + ledger.burstRejected.current
                let handlerRejected = statistics.lateEventsDiscarded + statistics.rejectedAfterStop - stoppedThisRound
                #expect(handlerRejected >= ledger.burstRejected.current)
                // ... and every accepted event, the producers' and the
                // handlers', is reduced or discarded by the stop.
                #expect(report.reduced + report.discarded == accepted + handlerEmits - handlerRejected,
                        "round \(round): events do not add up: \(report), \(statistics), accepted \(accepted)")
                #expect(checker.burstParts <= ledger.burstAccepted.current)
                if mode == .drain { #expect(checker.burstParts == ledger.burstAccepted.current) }
                #expect(ledger.otherErrors.current == 0)
                discardedEffects += statistics.effectsDiscardedAtStop
                stoppedAnswers += stoppedThisRound
            }
            // The stops did land while effects were pending.
            #expect(discardedEffects > 0, "no effect was pending at any stop in \(round) rounds: the race was not exercised")
            reportTotal("effect-router-stop discarded-effects", queue: name(of: queue), discardedEffects)
            reportTotal("effect-router-stop producer-emits-stopped", queue: name(of: queue), stoppedAnswers)
            await baseline.expectReturned()
        }
    }
}
