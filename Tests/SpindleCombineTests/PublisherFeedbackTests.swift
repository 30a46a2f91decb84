#if SpindleCombine || canImport(Combine)
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Dispatch
import Spindle
import SpindleCombine
import Testing
import SpindleTestSupport

// Feedbacks whose effects return publishers: the state form (one
// subscription per state) under both strategies, the filter and lens forms,
// and the stream form.

/// A phase the test advances by hand, and the values the effect delivered.
private struct Phased: Equatable, Sendable {
    var phase = 0
    var received: [Int] = []
}

private enum PhasedEvent: Sendable {
    case advance
    case received(Int)
}

private let phasedReducer = Reducer<Phased, PhasedEvent> { state, event in
    var state = state
    switch event {
    case .advance: state.phase += 1
    case .received(let value): state.received.append(value)
    }
    return state
}

/// A spin whose publisher feedback subscribes to `publisher` in phase 0 and
/// to nothing afterwards.
private func phasedSpin(
    _ publisher: StubbornPublisher<Int>,
    applying strategy: ExecutionStrategy
) -> Spin<Phased, PhasedEvent> {
    Spin(initialState: Phased()) {
        Feedback<Phased, PhasedEvent>(
            effect: { (state: Phased) -> AnyPublisher<PhasedEvent, Never> in
                state.phase == 0
                    ? publisher.map { PhasedEvent.received($0) }.eraseToAnyPublisher()
                    : Empty().eraseToAnyPublisher()
            },
            applying: strategy)
        phasedReducer
    }
}

/// Records which effect runs have ended (a cancelled async run: its task
/// has ended, so it can emit nothing more).
private final class RunEnds: SpinObserver {
    typealias State = Phased
    typealias Event = PhasedEvent
    let finished = Recorder<EffectRun>()
    var observesEachEvent: Bool { false }
    func effectFinished(_ run: EffectRun) { finished.append(run) }
}

@Suite struct PublisherFeedbackTests {
    @Test func everyValueOfTheEffectsPublisherIsReducedInOrder() async throws {
        let spin = Spin<[Int], Int>(initialState: []) {
            Feedback<[Int], Int>(effect: { (state: [Int]) -> AnyPublisher<Int, Never> in
                state.isEmpty ? Publishers.Sequence(sequence: [1, 2, 3, 4, 5]).eraseToAnyPublisher()
                    : Empty().eraseToAnyPublisher()
            }, applying: .continueOnNewState)  // the first value's state must not cancel the rest
            Reducer { state, event in state + [event] }
        }
        let loop = try spin.start()
        #expect(await eventually { loop.state.count == 5 })
        await loop.stop()
        #expect(loop.state == [1, 2, 3, 4, 5])
    }

    @Test func cancelOnNewStateCancelsTheSubscriptionAndDiscardsItsLateValues() async throws {
        let publisher = StubbornPublisher<Int>()
        let runEnds = RunEnds()
        let loop = try phasedSpin(publisher, applying: .cancelOnNewState).observed(by: runEnds).start()
        #expect(await eventually { publisher.subscribed.count == 1 })
        publisher.send(1)
        #expect(await eventually { loop.state.received == [1] })
        // That new state (still phase 0) cancelled the first subscription
        // and made a second one.
        #expect(await eventually { publisher.subscribed.count == 2 })
        #expect(publisher.cancelled.values == [0])

        #expect(loop.emit(.advance) == .accepted)
        #expect(await eventually { publisher.cancelled.values == [0, 1] })
        publisher.send(2)  // the publisher ignores the cancels: both get it
        #expect(loop.emit(.advance) == .accepted)
        #expect(await eventually { loop.state.phase == 2 })
        // Once the two cancelled runs have ended, everything they will ever
        // emit is in: accepted (and reduced by the draining stop) or discarded.
        let cancelledRuns: Set = [EffectRun(feedbackIndex: 0, id: 0), EffectRun(feedbackIndex: 0, id: 1)]
        #expect(await eventually { cancelledRuns.isSubset(of: Set(runEnds.finished.values)) })
        await loop.stop()
        #expect(loop.state == Phased(phase: 2, received: [1]))
    }

    @Test func continueOnNewStateKeepsEarlierSubscriptionsAndReducesTheirValues() async throws {
        let publisher = StubbornPublisher<Int>()
        let loop = try phasedSpin(publisher, applying: .continueOnNewState).start()
        #expect(await eventually { publisher.subscribed.count == 1 })
        #expect(loop.emit(.advance) == .accepted)
        #expect(await eventually { loop.state.phase == 1 })
        publisher.send(7)
        #expect(await eventually { loop.state.received == [7] })
        #expect(publisher.cancelled.values.isEmpty)
        await loop.stop()
        #expect(publisher.cancelled.values == [0])  // stop cancels every subscription
    }

    @Test func stoppingTheLoopCancelsTheSubscription() async throws {
        let publisher = StubbornPublisher<Int>()
        let loop = try phasedSpin(publisher, applying: .cancelOnNewState).start()
        #expect(await eventually { publisher.subscribed.count == 1 })
        await loop.stop()
        #expect(await eventually { publisher.cancelled.values == [0] })
        // A stopped loop reduces nothing more: what the stubborn publisher
        // sends now is rejected, so no pause is needed to see it not reduced.
        publisher.send(3)
        #expect(loop.state.received.isEmpty)
        #expect(loop.statistics.reducedEvents == 0)
    }

    @Test func aFilteredOutStateStartsNothingAndCancelsNothing() async throws {
        let publisher = StubbornPublisher<Int>()
        let spin = Spin<Phased, PhasedEvent>(initialState: Phased()) {
            Feedback<Phased, PhasedEvent>(
                effect: { (_: Phased) -> AnyPublisher<PhasedEvent, Never> in
                    publisher.map { PhasedEvent.received($0) }.eraseToAnyPublisher()
                },
                filteredBy: { $0.phase != 1 })
            phasedReducer
        }
        let loop = try spin.start()
        #expect(await eventually { publisher.subscribed.count == 1 })
        loop.emit(.advance)  // phase 1: filtered out
        #expect(await eventually { loop.state.phase == 1 })
        publisher.send(4)
        #expect(await eventually { loop.state.received == [4] })
        #expect(publisher.cancelled.values.isEmpty)
        #expect(publisher.subscribed.count == 1)
        loop.emit(.advance)  // phase 2: a new run cancels the first
        #expect(await eventually { publisher.cancelled.values == [0] && publisher.subscribed.count == 2 })
        await loop.stop()
    }

    @Test func aLensedEffectSeesOnlyItsPartOfTheState() async throws {
        let seen = Recorder<Int>()
        let spin = Spin<Phased, PhasedEvent>(initialState: Phased()) {
            Feedback<Phased, PhasedEvent>(
                effect: { (phase: Int) -> AnyPublisher<PhasedEvent, Never> in
                    seen.append(phase)
                    return phase < 3 ? Just(.advance).eraseToAnyPublisher() : Empty().eraseToAnyPublisher()
                },
                lensingOn: \.phase)
            phasedReducer
        }
        let loop = try spin.start()
        #expect(await eventually { seen.values == [0, 1, 2, 3] })
        await loop.stop()
        #expect(loop.state.phase == 3)
    }

    @Test func aStreamFormEffectSeesEveryStateInOrderAndItsEventsAreReduced() async throws {
        let seen = Recorder<Int>()
        let spin = Spin<Int, Int>(initialState: 0) {
            Feedback<Int, Int>(streamEffect: { states in
                states
                    .handleEvents(receiveOutput: { seen.append($0) })
                    .filter { $0 < 10 }
                    .map { _ in 1 }
                    .eraseToAnyPublisher()
            })
            Reducer { state, event in state + event }
        }
        let loop = try spin.start()
        #expect(await eventually { seen.count == 11 })
        #expect(seen.values == Array(0...10))
        #expect(loop.emit(5) == .accepted)
        #expect(await eventually { seen.values.last == 15 })
        await loop.stop()
        #expect(loop.state == 15)
    }

    @Test func everySubscriptionToTheStatesMadeWhileSubscribingSeesEveryState() async throws {
        let first = Recorder<Int>()
        let second = Recorder<Int>()
        let spin = Spin<Int, Int>(initialState: 0) {
            Feedback<Int, Int>(streamEffect: { states in
                let counting = states
                    .handleEvents(receiveOutput: { first.append($0) })
                    .filter { $0 < 5 }
                    .map { _ in 1 }
                    .eraseToAnyPublisher()
                let watching = states
                    .handleEvents(receiveOutput: { second.append($0) })
                    .filter { _ in false }
                    .eraseToAnyPublisher()
                // OpenCombine 0.14 has no merge: flatMap subscribes to both.
                return Publishers.Sequence(sequence: [counting, watching])
                    .flatMap { $0 }
                    .eraseToAnyPublisher()
            })
            Reducer { state, event in state + event }
        }
        let loop = try spin.start()
        #expect(await eventually { first.count == 6 && second.count == 6 })
        await loop.stop()
        #expect(first.values == Array(0...5))
        #expect(second.values == Array(0...5))
    }

    @Test func aStreamFormRunIsReportedStartedThenCancelledAndFinishedByTheStop() async throws {
        let runs = Recorder<String>()
        let spin = Spin<Int, Int>(initialState: 0) {
            Feedback<Int, Int>(streamEffect: { states in
                states.filter { $0 < 3 }.map { _ in 1 }.eraseToAnyPublisher()
            })
            Reducer { state, event in state + event }
        }.observed(by: RunRecorder(runs: runs))
        let loop = try spin.start()
        #expect(await eventually { loop.state == 3 })
        await loop.stop()
        // One run for the loop's life: its events, then its end at the stop.
        #expect(runs.values == ["started 0", "emitted 0", "emitted 0", "emitted 0", "cancelled 0", "finished 0"])
    }

    @Test func stoppingTheLoopCancelsTheStreamFormSubscription() async throws {
        let publisher = StubbornPublisher<Int>()
        let spin = Spin<Phased, PhasedEvent>(initialState: Phased()) {
            Feedback<Phased, PhasedEvent>(streamEffect: { _ in
                publisher.map { PhasedEvent.received($0) }.eraseToAnyPublisher()
            })
            phasedReducer
        }
        let loop = try spin.start()
        #expect(await eventually { publisher.subscribed.count == 1 })
        publisher.send(1)
        #expect(await eventually { loop.state.received == [1] })
        await loop.stop()
        #expect(await eventually { publisher.cancelled.values == [0] })
        // A stopped loop reduces nothing more: what the stubborn publisher
        // sends now is rejected, so no pause is needed to see it not reduced.
        publisher.send(2)
        #expect(loop.state.received == [1])
        #expect(loop.statistics.reducedEvents == 1)
    }
}
/// Writes down the effect runs an observer hears of.
private struct RunRecorder: SpinObserver {
    typealias State = Int
    typealias Event = Int
    let runs: Recorder<String>

    func effectStarted(_ run: EffectRun) { runs.append("started \(run.id)") }
    func effectEmitted(_ event: Int, from run: EffectRun) { runs.append("emitted \(run.id)") }
    func effectCancelled(_ run: EffectRun) { runs.append("cancelled \(run.id)") }
    func effectFinished(_ run: EffectRun) { runs.append("finished \(run.id)") }
}
#endif
