import Dispatch
import Spindle
import Testing
import SpindleTestSupport

/// Observers on spins whose reducer returns effects as data (`Next` and an
/// `EffectRouter`): the loop runs a rebuilt spin, and its observers must
/// come along; router handler runs are reported as effect runs of the
/// router's feedback index (`spin.feedbacks.count`).
@Suite("SpinObserver: effects as data")
struct EffectsAsDataObserverTests {
    enum Effect: Sendable, Equatable {
        case double(Int)
        case wait
    }

    @Test("reductions and router handler runs are reported")
    func routerRunsReported() async throws {
        let observer = ListeningObserver<Int, Int>()
        let router = EffectRouter<Effect, Int>()
            .route({ if case .double(let value) = $0 { value } else { nil } }, handler: { value in -value * 2 })
        let spin = Spin<Int, Int>(initialState: 0) {
            Reducer({ (state: Int, event: Int) -> Next<Int, Effect> in
                event > 0 ? .next(state + event, effects: [.double(event)]) : .next(state + event)
            }, effects: router)
        }
        let loop = try spin.observed(by: observer).start()
        loop.emit(5)
        // 5, then the handler's -10: the state ends at -5.
        #expect(await eventually { loop.state == -5 })
        await loop.stop()
        let heard = observer.heard
        #expect(heard.first == .started(0))
        #expect(heard.contains(.reduced(5, 5, 1)))
        #expect(heard.contains(.reduced(-10, -5, 2)))
        let run = EffectRun(feedbackIndex: 0, id: 0)  // the spin has no other feedback
        let runEvents = heard.filter {
            switch $0 {
            case .effectStarted(let r), .effectFinished(let r), .effectCancelled(let r), .effectEmitted(_, let r): r == run
            default: false
            }
        }
        // A sync handler's event comes between its start and its end.
        #expect(runEvents == [.effectStarted(run), .effectEmitted(-10, run), .effectFinished(run)])
    }

    @Test("stop cancels a running async handler: cancelled, then finished, and its late event reported")
    func routerRunCancelledAtStop() async throws {
        let observer = ListeningObserver<Int, Int>()
        let release = DispatchSemaphore(value: 0)
        let router = EffectRouter<Effect, Int>()
            .route(where: { $0 == .wait }, handler: { (_: Effect) async -> Int? in
                // Ignores cancellation, then answers after the stop.
                await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                    DispatchQueue.global().async { release.wait(); done.resume() }
                }
                return 1
            })
        let spin = Spin<Int, Int>(initialState: 0) {
            Feedback<Int, Int>(effect: { _ in nil })
            Reducer({ (state: Int, event: Int) -> Next<Int, Effect> in .next(state + event, effects: [.wait]) },
                    effects: router)
        }
        let loop = try spin.observed(by: observer).start()
        loop.emit(1)
        let run = EffectRun(feedbackIndex: 1, id: 0)  // after the one ordinary feedback
        #expect(await eventually { observer.heard.contains(.effectStarted(run)) })
        await loop.stop()
        #expect(observer.heard.contains(.effectCancelled(run)))
        release.signal()
        #expect(await eventually { observer.heard.contains(.effectFinished(run)) })
        #expect(await eventually { observer.heard.contains(.late(1, run)) || loop.statistics.rejectedAfterStop == 1 })
        let order = observer.heard.filter {
            switch $0 {
            case .effectStarted(let r), .effectFinished(let r), .effectCancelled(let r): r == run
            default: false
            }
        }
        #expect(order == [.effectStarted(run), .effectCancelled(run), .effectFinished(run)])
    }
}
