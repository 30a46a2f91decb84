#if SpindleCombine || canImport(Combine)
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
import Spindle
import SpindleAtoms
import SpindleCombine
import SpindleTestSupport
import Testing

/// A publisher atom over a subject the test drives.
struct Prices: PublisherAtom, Hashable {
    let subject: PassthroughSubject<Int, Refusal>
    func publisher(context: Context) -> PassthroughSubject<Int, Refusal> { subject }
    static func == (lhs: Prices, rhs: Prices) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}

struct Refusal: Error, Equatable {}

/// PassthroughSubject is not Sendable in OpenCombine's declaration; the
/// tests send from one task at a time.
extension PassthroughSubject: @retroactive @unchecked Sendable {}

@Suite struct PublisherAtomTests {
    @Test func aPublisherAtomFollowsItsPublisherUntilItFails() async throws {
        let subject = PassthroughSubject<Int, Refusal>()
        let store = AtomStore()
        let values = try store.values(of: Prices(subject: subject))
        var iterator = values.makeAsyncIterator()
        #expect(await iterator.next()?.isSuspending == true)
        subject.send(1)
        #expect(await iterator.next()?.value == 1)
        subject.send(2)
        #expect(await iterator.next()?.value == 2)
        subject.send(completion: .failure(Refusal()))
        #expect(await iterator.next()?.error == Refusal())
    }

    @Test func releasingAPublisherAtomCancelsItsSubscription() async throws {
        let cancelled = Counter()
        let subject = PassthroughSubject<Int, Refusal>()
        struct Tracked: PublisherAtom, Hashable {
            let subject: PassthroughSubject<Int, Refusal>
            let cancelled: Counter
            func publisher(context: Context) -> AnyPublisher<Int, Refusal> {
                let cancelled = cancelled
                return subject.handleEvents(receiveCancel: { _ = cancelled.add() }).eraseToAnyPublisher()
            }
            static func == (lhs: Tracked, rhs: Tracked) -> Bool { true }
            func hash(into hasher: inout Hasher) {}
        }
        let store = AtomStore()
        let subscription = try store.watch(Tracked(subject: subject, cancelled: cancelled)) { _ in }
        #expect(cancelled.current == 0)
        subscription.cancel()
        #expect(cancelled.current == 1)
    }
}
#endif
