import Dispatch
import Foundation
import Spindle
import Testing
import SpindleTestSupport

@Suite("SpinObserver: effect runs")
struct EffectRunObserverTests {
    @Test("synchronous runs: started, then finished, once per state")
    func syncRuns() async throws {
        let observer = ListeningObserver<Int, Int>()
        let spin = Spin<Int, Int>(initialState: 0) {
            Feedback<Int, Int>(effect: { state in state < 5 ? 1 : nil })
            Reducer { state, event in state + event }
        }
        let loop = try spin.observed(by: observer).start()
        #expect(await eventually { loop.state == 5 && observer.heard.contains(.effectFinished(EffectRun(feedbackIndex: 0, id: 5))) })
        await loop.stop()
        let runs = observer.heard.filter {
            if case .effectStarted = $0 { true } else if case .effectFinished = $0 { true } else { false }
        }
        let expected: [Heard<Int, Int>] = (0...5).flatMap { id -> [Heard<Int, Int>] in
            let run = EffectRun(feedbackIndex: 0, id: UInt64(id))
            return [.effectStarted(run), .effectFinished(run)]
        }
        #expect(runs == expected)
    }

    @Test("a synchronous run's event is reported with its run, between its start and its end")
    func syncRunEmitted() async throws {
        let observer = ListeningObserver<Int, Int>()
        let spin = Spin<Int, Int>(initialState: 0) {
            Feedback<Int, Int>(effect: { state in state < 3 ? 1 : nil })
            Feedback<Int, Int>(effect: { state in state == 1 ? 10 : nil }).executeOnReducerThread()
            Reducer { state, event in state + event }
        }
        let loop = try spin.observed(by: observer).start()
        #expect(await eventually { loop.state == 13 && observer.heard.contains(.effectFinished(EffectRun(feedbackIndex: 0, id: 4))) })
        await loop.stop()
        for feedback in 0...1 {
            let runs = observer.heard.filter {
                switch $0 {
                case .effectStarted(let run), .effectFinished(let run), .effectEmitted(_, let run): run.feedbackIndex == feedback
                default: false
                }
            }
            // Each run: started, its event if any, finished; never interleaved.
            var expected: [Heard<Int, Int>] = []
            // States 0, 1, 2, 12, 13: feedback 1's 10 is reduced after feedback 0's second 1.
            let events: [Int?] = feedback == 0 ? [1, 1, 1, nil, nil] : [nil, 10, nil, nil, nil]
            for (id, event) in events.enumerated() {
                let run = EffectRun(feedbackIndex: feedback, id: UInt64(id))
                expected.append(.effectStarted(run))
                if let event { expected.append(.effectEmitted(event, run)) }
                expected.append(.effectFinished(run))
            }
            #expect(runs == expected, "feedback \(feedback)")
        }
    }

    @Test("an async run's events are reported with their run; a late one is not")
    func asyncRunEmitted() async throws {
        let observer = ListeningObserver<Int, Int>()
        let spin = Spin<Int, Int>(initialState: 0) {
            Feedback<Int, Int>(effect: { (state: Int) -> AsyncStream<Int> in
                AsyncStream { continuation in
                    if state == 0 { continuation.yield(1); continuation.yield(2) }
                    continuation.finish()
                }
            }, applying: .continueOnNewState)
            Reducer { state, event in state + event }
        }
        let loop = try spin.observed(by: observer).start()
        let run0 = EffectRun(feedbackIndex: 0, id: 0)
        #expect(await eventually { loop.state == 3 && observer.heard.contains(.effectFinished(run0)) })
        await loop.stop()
        let emitted = observer.heard.filter { if case .effectEmitted = $0 { true } else { false } }
        #expect(emitted == [.effectEmitted(1, run0), .effectEmitted(2, run0)])
    }

    @Test("an observer that does not observe each event hears no emitted events")
    func emittedOnlyForEachEventObservers() async throws {
        let observer = ListeningObserver<Int, Int>(eachEvent: false)
        let spin = Spin<Int, Int>(initialState: 0) {
            Feedback<Int, Int>(effect: { state in state < 3 ? 1 : nil })
            Reducer { state, event in state + event }
        }
        let loop = try spin.observed(by: observer).start()
        #expect(await eventually { loop.state == 3 && observer.heard.contains(.effectFinished(EffectRun(feedbackIndex: 0, id: 3))) })
        await loop.stop()
        #expect(!observer.heard.contains { if case .effectEmitted = $0 { true } else { false } })
        #expect(observer.heard.contains(.effectStarted(EffectRun(feedbackIndex: 0, id: 3))))
    }

    @Test("inline runs on the reducer thread are reported too")
    func inlineRuns() async throws {
        let observer = ListeningObserver<Int, Int>()
        let spin = Spin<Int, Int>(initialState: 0) {
            Feedback<Int, Int>(effect: { state in state < 3 ? 1 : nil }).executeOnReducerThread()
            Reducer { state, event in state + event }
        }
        let loop = try spin.observed(by: observer).start()
        #expect(await eventually { loop.state == 3 })
        await loop.stop()
        let started = observer.heard.filter { if case .effectStarted = $0 { true } else { false } }
        #expect(started.count == 4)  // states 0, 1, 2, 3
    }

    @Test("cancelOnNewState: a run is started, cancelled, finished, and its late event is reported")
    func cancelledRun() async throws {
        let observer = ListeningObserver<Int, Int>()
        let release = DispatchSemaphore(value: 0)
        let spin = Spin<Int, Int>(initialState: 0) {
            Feedback<Int, Int>(effect: { (state: Int) async -> Int? in
                guard state == 0 else { return nil }
                // Run 0 waits (ignoring cancellation) and then answers late.
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    DispatchQueue.global().async { release.wait(); done.resume() }
                }
                return 100
            })
            Reducer { state, event in state + event }
        }
        let loop = try spin.observed(by: observer).start()
        let run0 = EffectRun(feedbackIndex: 0, id: 0)
        #expect(await eventually { observer.heard.contains(.effectStarted(run0)) })
        loop.emit(1)  // a new state cancels run 0
        #expect(await eventually { observer.heard.contains(.effectCancelled(run0)) })
        release.signal()
        #expect(await eventually { observer.heard.contains(.late(100, run0)) && observer.heard.contains(.effectFinished(run0)) })
        await loop.stop()
        #expect(loop.state == 1)
        let order = observer.heard.filter {
            switch $0 {
            case .effectStarted(let run), .effectCancelled(let run), .effectFinished(let run): run == run0
            default: false
            }
        }
        #expect(order == [.effectStarted(run0), .effectCancelled(run0), .effectFinished(run0)])
        #expect(loop.statistics.lateEventsDiscarded == 1)
    }

    @Test("a throwing effect is reported as failed, then finished; the loop goes on")
    func failedRun() async throws {
        let observer = ListeningObserver<Int, Int>()
        let spin = Spin<Int, Int>(initialState: 0) {
            Feedback<Int, Int>(effect: { (state: Int) async throws -> Int? in
                if state == 0 { throw Boom() }
                return nil
            })
            Reducer { state, event in state + event }
        }
        let loop = try spin.observed(by: observer).start(options: SpinOptions(onEffectError: { _ in }))
        let run0 = EffectRun(feedbackIndex: 0, id: 0)
        #expect(await eventually { observer.heard.contains(.effectFinished(run0)) })
        #expect(loop.emit(2) == .accepted)
        await loop.stop()
        #expect(loop.state == 2)
        let heard = observer.heard
        let failed = heard.firstIndex(of: .effectFailed(run0, "boom"))
        let finished = heard.firstIndex(of: .effectFinished(run0))
        #expect(failed != nil && finished != nil && failed! < finished!)
    }

    @Test("stop cancels live runs and reports them")
    func stopCancels() async throws {
        let observer = ListeningObserver<Int, Int>()
        let spin = Spin<Int, Int>(initialState: 0) {
            Feedback<Int, Int>(effect: { (_: Int) async -> Int? in
                // Ends only once cancelled, so the stop's cancellation has
                // no clock to beat, however slow the machine.
                while !Task.isCancelled { try? await Task.sleep(nanoseconds: 1_000_000_000) }
                return nil
            })
            Reducer { state, event in state + event }
        }
        let loop = try spin.observed(by: observer).start()
        let run0 = EffectRun(feedbackIndex: 0, id: 0)
        #expect(await eventually { observer.heard.contains(.effectStarted(run0)) })
        await loop.stop()
        #expect(observer.heard.contains(.effectCancelled(run0)))
        #expect(await eventually { observer.heard.contains(.effectFinished(run0)) })
    }
}
