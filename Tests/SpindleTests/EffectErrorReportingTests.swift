import Spindle
import SpindleTestSupport
import Testing

/// An error an effect throws on purpose.
private struct EffectFailure: Error, Equatable {}

// A thrown effect error is wrapped in an EffectError (the feedback's 0-based
// index, the underlying error), passed to onEffectError, and the loop keeps
// running.
@Suite struct EffectErrorReportingTests {
    @Test func aThrownEffectErrorReachesTheHookAndTheLoopKeepsRunning() async throws {
        let errors = Recorder<EffectError>()
        let loop = try Spin(initialState: Levels(left: 0, right: 10)) {
            Feedback(effect: leftEffect)
            Feedback(effect: { (state: Levels) async throws -> LevelsEvent? in
                if state == Levels(left: 10, right: 10) { throw EffectFailure() }
                return nil
            })
            levelsReducer
        }.start(options: SpinOptions(onEffectError: { error in errors.append(error) }))
        #expect(await eventually { errors.count == 1 && loop.state.left == 10 })
        #expect(loop.emit(.decreaseRight) == .accepted)
        #expect(await eventually { loop.state.right == 9 })
        await loop.stop()
        #expect(errors.values.map(\.feedbackIndex) == [1])
        #expect(errors.values.allSatisfy { $0.underlying is EffectFailure })
        #expect(loop.statistics.effectErrors == 1)
    }
}
