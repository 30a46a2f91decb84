#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif
public import SpindleAtoms
import Spindle

/// An atom whose value is the latest value of a publisher, as an
/// `AsyncPhase`: suspending until the first value, then each value as it
/// comes, and the failure if the publisher fails.
///
/// The publisher is subscribed to (with unlimited demand) from the atom's
/// first use; computing the atom again subscribes anew, and releasing it
/// cancels the subscription. A value the publisher sends while it is being
/// subscribed to (a `Just`) is applied right after the operation that
/// subscribed.
///
/// **Thread safety:** the publisher may send from any thread.
public protocol PublisherAtom: Atom where Produced == AsyncPhase<Publisher.Output, Publisher.Failure> {
    associatedtype Publisher: SpindleCombine.Publisher where Publisher.Output: Sendable
    typealias Context = AtomTransactionContext

    /// The publisher to follow.
    func publisher(context: Context) throws(AtomError) -> Publisher
}

extension PublisherAtom {
    public var producer: AtomProducer<AsyncPhase<Publisher.Output, Publisher.Failure>> {
        AtomProducer { context throws(AtomError) in
            let publisher = try self.publisher(context: context)
            let updater = try context.updater(of: Produced.self)
            let subscription = PublisherAtomSubscription()
            context.addTermination { subscription.cancel() }
            subscription.keep(
                publisher.sink(
                    receiveCompletion: { completion in
                        if case .failure(let error) = completion { updater.update(.failure(error)) }
                    },
                    receiveValue: { value in updater.update(.success(value)) }))
            return .suspending
        }
    }
}

/// The atom's subscription, cancelled by its termination from any thread.
/// `@unchecked Sendable`: the cancellable is reached only under the lock.
final class PublisherAtomSubscription: @unchecked Sendable {
    private let state = Lock<(cancellable: AnyCancellable?, cancelled: Bool)>((nil, false))

    func keep(_ cancellable: AnyCancellable) {
        let keep = state.withLock { state -> Bool in
            if state.cancelled { return false }
            state.cancellable = cancellable
            return true
        }
        if !keep { cancellable.cancel() }
    }

    func cancel() {
        let cancellable = state.withLock { state -> AnyCancellable? in
            state.cancelled = true
            defer { state.cancellable = nil }
            return state.cancellable
        }
        cancellable?.cancel()
    }
}
