import Dispatch
import Foundation
import Spindle
import Testing
import SpindleTestSupport

// Where a loop's code runs: the reducer and the feedbacks that name no
// queue on the loop's executor, a feedback that names a queue (its sync
// effect, and the code of its async, sequence and stream effects) on that
// queue.

/// Where one call ran.
struct Placement: Sendable {
    let state: Int
    let thread: UInt
    /// Whether it ran where it should (the executor, or the named queue).
    let inPlace: Bool
}

/// The effect forms whose code runs as a task.
enum TaskEffectForm: String, CaseIterable, Sendable, CustomStringConvertible {
    case async, sequence, stream
    var description: String { rawValue }
}

/// A sequence of `values` whose iterator calls `check` each time it is
/// asked for an element, before and after a suspension point.
struct CheckedElements: AsyncSequence, Sendable {
    typealias Element = Int
    let values: [Int]
    let check: @Sendable () -> Void

    struct AsyncIterator: AsyncIteratorProtocol {
        var rest: ArraySlice<Int>
        let check: @Sendable () -> Void

        mutating func next() async -> Int? {
            check()
            await Task.yield()
            check()
            return rest.popFirst()
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(rest: values[...], check: check) }
}

@Suite struct ExecutorTests {
    @Test(arguments: allExecutors)
    func aFeedbackWithoutAQueueRunsOnTheLoopsExecutorRightAfterEachReduction(executor kind: ExecutorKind) async throws {
        try await kind.withExecutor { executor in
            let reductions = Recorder<Placement>()
            let calls = Recorder<Placement>()
            // Reducer and feedback share the loop's one runner: never both at once.
            let busy = Counter()
            let overlaps = Counter()
            let loop = try Spin(initialState: 0) {
                Feedback<Int, CounterEvent>(effect: { state in
                    if busy.add() != 1 { overlaps.add() }
                    calls.append(Placement(state: state, thread: currentThreadID(), inPlace: kind.runsHere))
                    busy.add(-1)
                    return nil
                })
                Reducer<Int, CounterEvent> { state, _ in
                    if busy.add() != 1 { overlaps.add() }
                    reductions.append(Placement(state: state + 1, thread: currentThreadID(), inPlace: kind.runsHere))
                    busy.add(-1)
                    return state + 1
                }
            }.start(options: SpinOptions(executor: executor))
            for _ in 0..<2_000 { loop.emit(.increment) }
            #expect(await eventually { calls.count == 2_001 })
            await loop.stop()

            let called: [Placement] = calls.values
            let reduced: [Placement] = reductions.values
            #expect(called.map { $0.state } == Array(0...2_000))
            #expect(reduced.map { $0.state } == Array(1...2_000))
            #expect(called.allSatisfy { $0.inPlace }, "a feedback call ran off the \(kind)")
            #expect(reduced.allSatisfy { $0.inPlace }, "a reduction ran off the \(kind)")
            // Each state's feedback call on the thread that reduced it, in
            // the same slice.
            let mismatched: [Int] = zip(called.dropFirst(), reduced).filter { $0.thread != $1.thread }.map { $0.0.state }
            #expect(mismatched.isEmpty, "states \(mismatched.prefix(5)) ran off their reducer's thread")
            #expect(overlaps.current == 0)
            if kind == .dedicatedThread {
                let threads = Set(reduced.map { $0.thread } + called.map { $0.thread })
                #expect(threads.count == 1)
            }
        }
    }

    @Test(arguments: allExecutors)
    func aSyncFeedbackWithAQueueRunsOnThatQueueAndSeesEveryStateInOrder(executor kind: ExecutorKind) async throws {
        try await kind.withExecutor { executor in
            let labelled = MarkedQueue("placement.label-form")
            let method = MarkedQueue("placement.method-form")
            let labelCalls = Recorder<Placement>()
            let methodCalls = Recorder<Placement>()
            let loop = try Spin(initialState: 0) {
                Feedback<Int, CounterEvent>(effect: { state in
                    labelCalls.append(Placement(state: state, thread: currentThreadID(), inPlace: labelled.isCurrent))
                    return nil
                }, on: labelled.queue)
                Feedback<Int, CounterEvent>(effect: { state in
                    methodCalls.append(Placement(state: state, thread: currentThreadID(), inPlace: method.isCurrent))
                    return nil
                }).execute(on: method.queue)
                Reducer(counterReducer.reduce)
            }.start(options: SpinOptions(executor: executor))
            for _ in 0..<2_000 { loop.emit(.increment) }
            #expect(await eventually { labelCalls.count == 2_001 && methodCalls.count == 2_001 })
            await loop.stop()
            #expect(labelCalls.values.map { $0.state } == Array(0...2_000))
            #expect(methodCalls.values.map { $0.state } == Array(0...2_000))
            #expect(labelCalls.values.allSatisfy { $0.inPlace }, "on: ran off its queue")
            #expect(methodCalls.values.allSatisfy { $0.inPlace }, "execute(on:) ran off its queue")
        }
    }

    @Test(arguments: TaskEffectForm.allCases)
    func theCodeOfATaskEffectOfAFeedbackWithAQueueRunsOnThatQueue(form: TaskEffectForm) async throws {
        let effects = MarkedQueue("placement.effects")
        // Every check the effect's code made: whether it ran on `effects`.
        let checks = Recorder<Bool>()
        let check: @Sendable () -> Void = { checks.append(effects.isCurrent) }
        // Each form emits 1 for every state below 5: the loop ends at 5.
        let feedback: Feedback<Int, Int>
        switch form {
        case .async:
            feedback = Feedback(effect: { (state: Int) async -> Int? in
                check()
                await Task.yield()
                check()
                return state < 5 ? 1 : nil
            }, on: effects.queue)
        case .sequence:
            feedback = Feedback(effect: { (state: Int) -> CheckedElements in
                check()
                return CheckedElements(values: state < 5 ? [1] : [], check: check)
            }, on: effects.queue)
        case .stream:
            feedback = Feedback(streamEffect: { states in
                check()
                return states.compactMap { state -> Int? in
                    check()
                    await Task.yield()
                    check()
                    return state < 5 ? 1 : nil
                }
            }, on: effects.queue)
        }
        let loop = try Spin(initialState: 0) {
            feedback
            Reducer<Int, Int> { state, event in state + event }
        }.start()
        #expect(await eventually { loop.state == 5 })
        // The run for the last state makes its checks after the state is
        // published: wait for them before the stop, which would cancel it.
        #expect(await eventually { checks.count >= 6 * 2 })
        await loop.stop()
        #expect(loop.state == 5)
        #expect(checks.values.allSatisfy { $0 }, "\(checks.values.filter { !$0 }.count) of \(checks.count) checks ran off the queue")
    }

    @Test func aQueueExecutorRunsTheReducerAndTheQueuelessFeedbacks() async throws {
        let main = MarkedQueue("placement.spin-queue")
        let reducerChecks = Recorder<Bool>()
        let feedbackChecks = Recorder<Bool>()
        let loop = try Spin(initialState: 0) {
            Feedback<Int, CounterEvent>(effect: { _ in
                feedbackChecks.append(main.isCurrent)
                return nil
            })
            Reducer<Int, CounterEvent> { state, _ in
                reducerChecks.append(main.isCurrent)
                return state + 1
            }
        }.start(options: SpinOptions(executor: .queue(main.queue)))
        for _ in 0..<100 { loop.emit(.increment) }
        #expect(await eventually { feedbackChecks.count == 101 })
        await loop.stop()
        #expect(reducerChecks.count == 100)
        #expect(reducerChecks.values.allSatisfy { $0 })
        #expect(feedbackChecks.values.allSatisfy { $0 })
    }

    @Test func aLoopOnAQueueExecutorReducesOnThatQueue() async throws {
        let queue = MarkedQueue("placement.executor-queue")
        let checks = Recorder<Bool>()
        let loop = try Spin(initialState: 0, feedbacks: [], reducer: Reducer<Int, CounterEvent> { state, _ in
            checks.append(queue.isCurrent)
            return state + 1
        }).start(options: SpinOptions(executor: .queue(queue.queue)))
        for _ in 0..<1_000 { loop.emit(.increment) }
        let report = await loop.stop()
        #expect(report.reduced == 1_000)
        #expect(checks.count == 1_000)
        #expect(checks.values.allSatisfy { $0 })
    }

    /// A queue-less feedback (or a gear feedback: `gear.propagate` emits
    /// into every attached loop) runs on its loop's executor; an emit from
    /// there into another loop's full `.block` ring waits for space, on the
    /// pool thread that the other loop needs to make space. With a
    /// one-thread pool that deadlocked at once (with N threads, N such emits
    /// at once did); now the pool starts a spare thread when its last one
    /// blocks. Should that regress, stopping the receiving loop answers the
    /// waiting emit `.stopped`, which lets the test end.
    @Test(.timeLimit(.minutes(10)))  // a hang guard: see SpinStreamTests
    func anEmitIntoAnotherLoopsFullBlockingRingFromAPoolThreadDoesNotStallThePool() async throws {
        let pool = try ReducerPool(threads: 1, name: "cross-loop")
        let receiver = try Spin(initialState: 0, feedbacks: [], reducer: Reducer<Int, Int> { state, event in state + event })
            .start(options: SpinOptions(executor: .pool(pool), queue: .bounded(capacity: 1, overflow: .block)))
        let answers = Recorder<EmitResult>()
        let sender = try Spin(initialState: 0) {
            Feedback<Int, Int>(effect: { _ in
                answers.append(receiver.emit(1))
                return nil
            })
            Reducer<Int, Int> { state, event in state + event }
        }.start(options: SpinOptions(executor: .pool(pool)))
        for _ in 0..<10 { sender.emit(1) }
        // The initial state and ten more: eleven emits into the receiver.
        let progressed = await eventually { receiver.state == 11 }
        #expect(progressed, "receiver \(receiver.state), sender \(sender.state), answers \(answers.count)")
        await receiver.stop()
        await sender.stop()
        try await pool.shutdown()
    }

    /// An effect route that names no queue runs its handler on the loop's
    /// queue when the loop runs on one (as a queue-less feedback does), and
    /// on a serial queue of its own on any other executor.
    @Test(arguments: [true, false])
    func anEffectRouteWithoutAQueueRunsOnTheLoopsQueue(loopOnQueue: Bool) async throws {
        let loopQueue = MarkedQueue("placement.route-default")
        let places = Recorder<Bool>()
        let router = EffectRouter<TaskEffect, TaskEvent>()
            .route({ effect -> Int? in if case .work(let value) = effect { value } else { nil } }) { value in
                places.append(loopQueue.isCurrent)
                return .done(value)
            }
        let loop = try Spin(initialState: Tally()) { Reducer(tallyNext, effects: router) }
            .start(options: SpinOptions(executor: loopOnQueue ? .queue(loopQueue.queue) : .dedicatedThread))
        loop.emit(.requestMany([1, 2, 3]))
        #expect(await eventually { loop.state.done == [1, 2, 3] })
        await loop.stop()
        #expect(places.values == Array(repeating: loopOnQueue, count: 3))
    }

    @Test func aLoopOnAnActorIsSerializedWithTheActorsOtherWork() async throws {
        let bench = Workbench()
        let busy = Counter()
        let overlaps = Counter()
        let calls = Counter()
        let loop = try Spin(initialState: 0) {
            Feedback<Int, CounterEvent>(effect: { _ in
                bench.occupy(busy: busy, overlaps: overlaps)
                calls.add()
                return nil
            })
            Reducer(counterReducer.reduce)
        }.start(options: SpinOptions(executor: .actor(bench)))
        #expect(SpinExecutor.actor(bench).description == "actor 'Workbench'")
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for _ in 0..<2_000 { await bench.work(busy: busy, overlaps: overlaps) }
            }
            group.addTask {
                for _ in 0..<2_000 {
                    loop.emit(.increment)
                    await Task.yield()
                }
            }
        }
        #expect(await eventually { calls.current == 2_001 })
        await loop.stop()
        #expect(loop.state == 2_000)
        #expect(overlaps.current == 0, "a slice ran beside the actor's own work")
    }
}

/// A default actor whose work a test interleaves with a loop's slices.
actor Workbench {
    /// A stretch of the actor's own work.
    func work(busy: Counter, overlaps: Counter) {
        occupy(busy: busy, overlaps: overlaps)
    }

    /// Holds `busy` for a few hundred atomic operations and counts an
    /// overlap when someone else held it too. Called isolated to the actor
    /// (by `work`, or by a slice of a loop on the actor) — never
    /// asserted here, since only the loop's slices are under test.
    nonisolated func occupy(busy: Counter, overlaps: Counter) {
        if busy.add() != 1 { overlaps.add() }
        for _ in 0..<200 { _ = busy.current }
        busy.add(-1)
    }
}
