#if SpindleCombine || canImport(Combine)
// No Combine or OpenCombine import here, on purpose: this file checks that
// `import SpindleCombine` alone brings the names its API is made of (it
// would not compile otherwise).
import Spindle
import SpindleCombine
import SpindleTestSupport
import Testing

@Suite("SpindleCombine re-exports")
struct ReexportTests {
    @Test func aPublisherFeedbackIsWrittenWithImportSpindleCombineAlone() async throws {
        let feedback = Feedback<Int, Int>(effect: { (state: Int) -> AnyPublisher<Int, Never> in
            (state == 0 ? [5] : []).publisher.eraseToAnyPublisher()
        })
        let loop = try Spin(initialState: 0, feedbacks: [feedback], reducer: Reducer<Int, Int> { $0 + $1 }).start()
        var reached = false
        for await state in loop.states() where state == 5 {
            reached = true
            break
        }
        #expect(reached)
        await loop.stop()
    }

    @Test func theObservableSpinConformsToTheReexportedObservableObject() {
        func isObservable<T: ObservableObject>(_: T.Type) -> Bool { true }
        let cancellable: AnyCancellable? = nil
        #expect(isObservable(ObservableSpin<Int, Int>.self))
        #expect(cancellable == nil)
    }
}
#endif
