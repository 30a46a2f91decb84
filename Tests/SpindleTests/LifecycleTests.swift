import Dispatch
import Foundation
import Spindle
import Testing
import SpindleTestSupport

// The lifecycle a server needs: wait until what was emitted is reduced
// (`settled()`), and stop from synchronous code without waiting
// (`requestStop(_:)`).

@Suite struct LifecycleTests {
    @Test(arguments: allExecutors, allQueueKinds)
    func settledReturnsOnceEveryAcceptedEventIsReducedAndSeen(executor kind: ExecutorKind, queue: QueueKind) async throws {
        try await kind.withExecutor { executor in
            let seen = Recorder<Int>()
            let loop = try Spin(initialState: 0) {
                Feedback<Int, CounterEvent>(effect: { state in
                    seen.append(state)
                    return nil
                })
                Reducer(counterReducer.reduce)
            }.start(options: SpinOptions(executor: executor, queue: queue))
            // Rounds of emits from several threads (lanes and the shared
            // queue), each followed by `settled()`: no polling, so a
            // `settled()` that returned early shows as a smaller state.
            var total = 0
            for round in 1...20 {
                let perThread = round * 50
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<3 {
                        group.addTask {
                            await onThread { for _ in 0..<perThread { loop.emit(.increment) } }
                        }
                    }
                }
                total += 3 * perThread
                await loop.settled()
                #expect(loop.state == total, "round \(round): settled() returned before every event was reduced")
                #expect(seen.values.last == total, "round \(round): the feedback had not seen the state")
            }
            await loop.stop()
        }
    }

    @Test func settledReturnsAtOnceOnAStoppedLoopAndWhenTheLoopStops() async throws {
        let gate = DispatchSemaphore(value: 0)
        let loop = try Spin(initialState: 0) {
            Reducer<Int, CounterEvent> { state, _ in
                gate.wait()
                gate.signal()
                return state + 1
            }
        }.start(options: SpinOptions(executor: .dedicatedThread))
        loop.emit(.increment)
        loop.emit(.increment)
        // The reducer waits at the gate: the wait ends with the stop.
        async let waited: Void = loop.settled()
        loop.requestStop(.discardPending)
        gate.signal()
        await waited
        let report = await loop.stop()
        #expect(report.reduced + report.discarded == 2)
        await loop.settled()  // stopped: at once
    }

    @Test(arguments: allExecutors)
    func requestStopClosesTheGateAtOnceAndTheStopDrains(executor kind: ExecutorKind) async throws {
        try await kind.withExecutor { executor in
            let loop = try Spin(initialState: 0) { Reducer(counterReducer.reduce) }
                .start(options: SpinOptions(executor: executor))
            for _ in 0..<1_000 { loop.emit(.increment) }
            loop.requestStop()
            #expect(loop.emit(.increment) == .stopped)
            // A later stop waits for this one and reports it; the first
            // request's mode (drain) wins.
            let report = await loop.stop(.discardPending)
            #expect(report.reduced == 1_000)
            #expect(report.discarded == 0)
            #expect(loop.state == 1_000)
        }
    }
}

@Suite struct FeedbackFilterModifierTests {
    /// The forms `filtered(by:)` must reach, each recording the states its
    /// effect was called with.
    enum Form: String, CaseIterable, Sendable, CustomStringConvertible {
        case sync, renderOnly, async, sequence, stream, toGear, onQueue
        var description: String { rawValue }
    }

    @Test(arguments: Form.allCases)
    func aFilteredFeedbackIsCalledOnlyForStatesThatPass(form: Form) async throws {
        let calls = Recorder<Int>()
        let queue = DispatchQueue(label: "spindle-test-filter")
        let gear = Gear<Int>()
        let feedback: Feedback<Int, CounterEvent> = switch form {
        case .sync: Feedback(effect: { (state: Int) -> CounterEvent? in calls.append(state); return nil })
        case .renderOnly: Feedback(effect: { (state: Int) in calls.append(state) })
        case .async: Feedback(effect: { (state: Int) async -> CounterEvent? in calls.append(state); return nil },
                              applying: .continueOnNewState)
        case .sequence: Feedback(effect: { (state: Int) -> AsyncStream<CounterEvent> in
            calls.append(state)
            return AsyncStream { $0.finish() }
        }, applying: .continueOnNewState)
        case .stream: Feedback(streamEffect: { (states: AsyncStream<Int>) in
            states.compactMap { (state: Int) -> CounterEvent? in calls.append(state); return nil }
        })
        case .toGear: Feedback(attachedTo: gear, toGear: { (state: Int) -> Int? in calls.append(state); return nil })
        case .onQueue: Feedback(effect: { (state: Int) in calls.append(state) }, on: queue)
        }
        // Two filters: both must pass (even states above 10).
        let filtered = feedback.filtered(by: { $0.isMultiple(of: 2) }).filtered(by: { $0 > 10 })
        let loop = try Spin(initialState: 0, feedbacks: [filtered], reducer: counterReducer).start()
        for _ in 0..<30 { loop.emit(.increment) }
        #expect(await eventually { calls.values.last == 30 })
        await loop.stop()
        #expect(calls.values == Array(stride(from: 12, through: 30, by: 2)), "\(form)")
    }
}

@Suite struct PerStartFeedbackTests {
    @Test func oneSpinStartedManyTimesGivesEachStartItsOwnFeedbacks() async throws {
        let shared = Recorder<Int>()
        let spin = Spin(initialState: 0, feedbacks: [
            Feedback<Int, CounterEvent>(effect: { (state: Int) in shared.append(state) })
        ], reducer: counterReducer)
        // Three "connections", each with its own id reachable from its feedback.
        let seen = (0..<3).map { _ in Recorder<String>() }
        let loops = try (0..<3).map { connection in
            try spin.start(adding: [Feedback(effect: { (state: Int) in seen[connection].append("\(connection):\(state)") })])
        }
        for (index, loop) in loops.enumerated() {
            for _ in 0...index { loop.emit(.increment) }
        }
        for loop in loops { await loop.settled() }
        for loop in loops { await loop.stop() }
        for connection in 0..<3 {
            #expect(seen[connection].values == (0...connection + 1).map { "\(connection):\($0)" })
        }
        // The spin's own feedback ran for every start: 2 + 3 + 4 states.
        #expect(shared.count == 9)
        #expect(spin.feedbacks.count == 1, "the spin itself is unchanged")
    }

    /// A connection's environment, as a server would give each start.
    struct Connection: Sendable {
        let id: Int
        let sent: Recorder<String>
    }

    @Test func eachStartMakesTheSpinsPerStartFeedbackFromItsOwnEnvironment() async throws {
        let made = Recorder<Int>()
        let spin = Spin(initialState: 0, reducer: counterReducer) {
            Feedback.withEnvironment { (connection: Connection) in
                made.append(connection.id)
                return Feedback(effect: { (state: Int) in connection.sent.append("\(connection.id):\(state)") })
            }
            // Modifiers apply to what the environment makes.
            Feedback.withEnvironment { (connection: Connection) in
                Feedback(effect: { (state: Int) in connection.sent.append("even \(state)") })
            }.filtered(by: { $0.isMultiple(of: 2) })
        }
        let connections = (0..<3).map { Connection(id: $0, sent: Recorder<String>()) }
        let loops = try connections.map { try spin.start(environment: $0) }
        for (index, loop) in loops.enumerated() {
            for _ in 0...index { loop.emit(.increment) }
        }
        for loop in loops { await loop.settled() }
        for loop in loops { await loop.stop() }
        for connection in connections {
            let states = 0...connection.id + 1
            var expected: [String] = []
            for state in states {
                expected.append("\(connection.id):\(state)")
                if state.isMultiple(of: 2) { expected.append("even \(state)") }
            }
            #expect(connection.sent.values == expected)
        }
        // Made once per start, from that start's environment.
        #expect(made.values.sorted() == [0, 1, 2])
        #expect(spin.feedbacks.count == 2, "the spin itself is unchanged")
    }

    @Test func aSpinWithAPerStartFeedbackDoesNotStartWithoutItsEnvironment() async throws {
        let ran = Recorder<Int>()
        let spin = Spin(initialState: 0, reducer: counterReducer) {
            Feedback<Int, CounterEvent>(effect: { (state: Int) in ran.append(state) })
            Feedback.withEnvironment { (connection: Connection) in
                Feedback(effect: { (state: Int) in connection.sent.append("\(state)") })
            }
        }
        #expect(throws: SpinExecutorError.missingEnvironment(expected: "Connection", given: nil)) {
            try spin.start()
        }
        #expect(throws: SpinExecutorError.missingEnvironment(expected: "Connection", given: "Int")) {
            try spin.start(environment: 42)
        }
        // A bridge's loop (it cannot throw) is stopped from birth.
        let unstarted = SpinLoop(spin: spin, options: SpinOptions())
        #expect(unstarted.startError == .missingEnvironment(expected: "Connection", given: nil))
        #expect(unstarted.emit(.increment) == .stopped)
        #expect(throws: SpinExecutorError.missingEnvironment(expected: "Connection", given: "String")) {
            try spin.start(environment: "not a connection")
        }
        #expect(await unstarted.stop().reduced == 0)
        #expect(ran.count == 0, "a loop that did not start ran no feedback")
        let description = SpinExecutorError.missingEnvironment(expected: "Connection", given: nil).description
        #expect(description.contains("Connection") && description.contains("start(environment:)"))
    }
}
