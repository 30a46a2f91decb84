import Dispatch
import Foundation
import Spindle
import SpindleTestSupport
import Testing

// Where a feedback's effect runs: the queue it names (label or method
// form), else the loop's queue (SpinExecutor.queue), else the loop's
// executor; and a reducer-thread feedback right after each reduction, on
// the thread that made the state. (The FeedbackFormsQueues snippet shows these forms.)
@Suite struct FeedbackPlacementTests {
    @Test func aFeedbackRunsOnTheQueueItNamesElseOnTheLoopsQueueElseOffBoth() async throws {
        let effects = DispatchQueue(label: "levels.effects")
        let key = DispatchSpecificKey<String>()
        effects.setSpecific(key: key, value: "levels.effects")
        let seen = Recorder<String>()
        @Sendable func probe(_ name: String) -> @Sendable (Levels) -> LevelsEvent? {
            { _ in
                seen.append("\(name): \(DispatchQueue.getSpecific(key: key) ?? "another queue")")
                return nil
            }
        }
        let onLoopQueue = Spin(initialState: Levels(left: 0, right: 10)) {
            Feedback(effect: probe("on: wins over the loop's queue"), on: DispatchQueue(label: "elsewhere"))
            Feedback(effect: probe("the loop's queue"))
            levelsReducer
        }
        let onPool = Spin(initialState: Levels(left: 0, right: 10)) {
            Feedback(effect: probe("label form"), on: effects)
            Feedback(effect: probe("method form")).execute(on: effects)
            Feedback(effect: probe("no queue named"))
            levelsReducer
        }
        let loops = [try onLoopQueue.start(options: SpinOptions(executor: .queue(effects))), try onPool.start()]
        for loop in loops { loop.emit(.increaseLeft) }
        // Each of the five feedbacks sees the initial state and the new one.
        #expect(await eventually { seen.count == 10 })
        for loop in loops { await loop.stop() }
        #expect(Set(seen.values) == [
            "on: wins over the loop's queue: another queue",
            "the loop's queue: levels.effects",
            "label form: levels.effects",
            "method form: levels.effects",
            "no queue named: another queue",
        ])
    }

    @Test func aReducerThreadFeedbackRunsRightAfterEachReductionOnItsThread() async throws {
        // Which thread made each state, and which thread each feedback call ran on.
        let reductions = Recorder<(left: Int, thread: UInt)>()
        let calls = Recorder<(left: Int, thread: UInt, name: String?)>()
        let loop = try Spin(initialState: Levels(left: 0, right: 10)) {
            Feedback(effect: leftEffect).executeOnReducerThread()
            Feedback<Levels, LevelsEvent>(effect: { state in
                calls.append((state.left, currentThreadID(), Thread.current.name))
                return nil
            }).executeOnReducerThread()
            Reducer<Levels, LevelsEvent> { state, event in
                let next = levelsReducer.reduce(state, event)
                reductions.append((next.left, currentThreadID()))
                return next
            }
        }.start()
        #expect(await eventually { loop.state == Levels(left: 10, right: 10) })
        let report = await loop.stop()
        #expect(report.reduced == 10)
        // The initial state and the ten new ones, in order, each right after
        // its reduction on the thread that made it: a thread of the loop's
        // executor, the shared pool (threads "spindle-shared-N", cut to the
        // 15 bytes Linux keeps).
        #expect(calls.values.map(\.left) == Array(0...10))
        #expect(reductions.values.map(\.left) == Array(1...10))
        for (call, reduction) in zip(calls.values.dropFirst(), reductions.values) {
            #expect(call.thread == reduction.thread, "state \(call.left)")
        }
        #expect(calls.values.allSatisfy { $0.name?.hasPrefix("spindle-shared") == true },
                "\(calls.values.map(\.name))")
    }
}
