#if SpindleCombine || canImport(Combine)
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Dispatch
import Foundation
@_spi(Testing) import Spindle
import SpindleCombine
import Testing
import SpindleTestSupport

// The feedback contract for the publisher forms (the core forms are in
// SpindleTests' FeedbackContractMatrixTests): on every executor (a reducer
// pool, a dedicated thread, a serial queue through `SpinExecutor.queue`, a
// `SerialExecutor`, the main actor), with a queue named or not, under both
// strategies, each effect is called for the initial state first and then
// every new state in order, never after `stop()` returns, and where the feedback
// runs: its queue, else the loop's serial queue. For the stream form, the
// "call" is the arrival of a state in the chain built on the states
// publisher, whose operators run there too.

private enum PublisherForm: String, CaseIterable, Sendable, CustomStringConvertible {
    case perState, stream
    var description: String { rawValue }
}

/// Where the loop runs: a pool, a dedicated thread, a serial queue, a
/// `SerialExecutor` or the main actor as its executor.
private enum LoopPlace: String, CaseIterable, Sendable, CustomStringConvertible {
    case pool, dedicatedThread, serialQueue, serialExecutor, mainActor
    var description: String { rawValue }
}

private struct PublisherCall: Sendable {
    let state: Int
    let afterStop: Bool
    let placed: Bool
}

@Suite("The feedback contract for publisher forms")
struct PublisherContractMatrixTests {
    @Test(arguments: PublisherForm.allCases, LoopPlace.allCases)
    fileprivate func publisherEffectsAreCalledInStateOrderInPlaceAndNeverAfterStop(
        form: PublisherForm, place: LoopPlace
    ) async throws {
        for namedQueue in [false, true] {
            for strategy in form == .perState ? [ExecutionStrategy.cancelOnNewState, .continueOnNewState] : [.continueOnNewState] {
                try await check(form: form, place: place, namedQueue: namedQueue, strategy: strategy)
            }
        }
    }

    private func check(form: PublisherForm, place: LoopPlace, namedQueue: Bool, strategy: ExecutionStrategy) async throws {
        let events = 40
        let (named, namedKey) = markedQueue("spindle-test-publisher-feedback")
        let (loopQueue, loopKey) = markedQueue("spindle-test-publisher-loop")
        let stopReturned = Counter()
        let calls = Recorder<PublisherCall>()
        let placedHere: @Sendable () -> Bool = {
            if namedQueue { return DispatchQueue.getSpecific(key: namedKey) == 1 }
            switch place {
            case .serialQueue: return DispatchQueue.getSpecific(key: loopKey) == 1
            case .pool, .dedicatedThread, .serialExecutor, .mainActor: return true
            }
        }
        let record: @Sendable (Int) -> Void = { state in
            calls.append(PublisherCall(state: state, afterStop: stopReturned.current > 0, placed: placedHere()))
        }
        let queue: DispatchQueue? = namedQueue ? named : nil
        // Subscriptions made and ended (completed or cancelled): once they
        // match after the stop, no run is left to call anything.
        let subscribed = Counter()
        let ended = Counter()
        let feedback: Feedback<Int, Int>
        switch form {
        case .perState:
            feedback = Feedback(effect: { (state: Int) -> AnyPublisher<Int, Never> in
                record(state)
                return Empty<Int, Never>(completeImmediately: false)
                    .handleEvents(
                        receiveSubscription: { _ in subscribed.add() },
                        receiveCompletion: { _ in ended.add() },
                        receiveCancel: { ended.add() })
                    .eraseToAnyPublisher()
            }, on: queue, applying: strategy)
        case .stream:
            feedback = Feedback(streamEffect: { (states: AnyPublisher<Int, Never>) -> AnyPublisher<Int, Never> in
                states.compactMap { (state: Int) -> Int? in
                    record(state)
                    return nil
                }
                .handleEvents(
                    receiveSubscription: { _ in subscribed.add() },
                    receiveCompletion: { _ in ended.add() },
                    receiveCancel: { ended.add() })
                .eraseToAnyPublisher()
            }, on: queue)
        }
        let spin = Spin<Int, Int>(
            initialState: 0, feedbacks: [feedback],
            reducer: Reducer { state, event in state + event }
        )
        let pool = place == .pool ? try ReducerPool(threads: 2, name: "spindle-test-publisher") : nil
        let executor: SpinExecutor = switch place {
        case .pool: .pool(pool!)
        case .dedicatedThread: .dedicatedThread
        case .serialQueue: .queue(loopQueue)
        case .serialExecutor: .serialExecutor(QueueSerialExecutor(DispatchQueue(label: "spindle-test-publisher-executor")))
        case .mainActor: .mainActor
        }
        let loop = try spin.start(options: SpinOptions(executor: executor))
        for _ in 0..<events { loop.emit(1) }
        _ = await eventually { calls.values.last?.state == events }
        await loop.stop()
        stopReturned.add()
        #expect(await eventually { subscribed.current > 0 && ended.current == subscribed.current }, "runs still live")
        try await pool?.shutdown()

        let context = "\(form) on \(place), queue named: \(namedQueue), \(strategy)"
        let states = calls.values.map(\.state)
        #expect(states == Array(0...events), "\(context): calls \(states.count), \(states.prefix(8))…")
        let late = calls.values.filter(\.afterStop).count
        let misplaced = calls.values.filter { !$0.placed }.count
        #expect(late == 0, "\(context): \(late) calls after stop() returned")
        #expect(misplaced == 0, "\(context): \(misplaced) calls off their queue")
    }
}

#endif
