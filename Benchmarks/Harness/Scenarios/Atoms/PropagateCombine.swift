#if canImport(Combine)
import Combine
#elseif canImport(OpenCombine)
import OpenCombine
#endif

#if canImport(Combine) || canImport(OpenCombine)
/// `atoms-propagate` on plain OpenCombine (Combine on Apple platforms), the
/// yardstick: the graph as a Combine user would build it, and only the part
/// the store would hold in use (the atoms watched and their ancestors).
///
/// A source is a `CurrentValueSubject`; a derived atom is its parent's
/// publisher `.map` (the computation, counted) `.removeDuplicates()` (an
/// atom stops at an equal value; here values always change, so it filters
/// nothing and costs its comparison, as the store's does); a derived atom
/// with two consumers (a watch and the next atom of its chain) is
/// `.multicast` through a `PassthroughSubject`, so it is computed once per
/// change, as in the store. A watch is a `sink`. Connections are made
/// leaves first, so the subjects' current values reach every sink.
enum PropagateCombine {
    static func run(_ shape: PropagateShape, books: PropagateBooks) -> (elapsed: UInt64, allocations: AllocationCount?) {
        var subjects: [CurrentValueSubject<Int, Never>] = []
        subjects.reserveCapacity(shape.sources)
        var cancellables: [AnyCancellable] = []
        var connections: [any Cancellable] = []
        for source in 0..<shape.sources {
            let subject = CurrentValueSubject<Int, Never>(0)
            subjects.append(subject)
            let sourceAtom = shape.derivedCount + source
            if shape.watched[sourceAtom] {
                let index = Int32(sourceAtom)
                cancellables.append(subject.sink { PropagateBooks.delivered(index, $0) })
            }
            for chain in 0..<PropagateShape.chainsPerSource {
                let base = source * PropagateShape.derivedPerSource + chain * PropagateShape.depth
                let inUse = (0..<PropagateShape.depth).lazy.filter { shape.watchedBelow[base + $0] > 0 }.count
                var upstream = subject.eraseToAnyPublisher()
                var chainConnectables: [Publishers.Multicast<Publishers.RemoveDuplicates<Publishers.Map<AnyPublisher<Int, Never>, Int>>, PassthroughSubject<Int, Never>>] = []
                for level in 0..<inUse {
                    let index = Int32(base + level)
                    let node = upstream
                        .map { value -> Int in
                            PropagateBooks.recomputed(index)
                            return value &* 3 &+ 1
                        }
                        .removeDuplicates()
                    let isWatched = shape.watched[base + level]
                    if isWatched, level + 1 < inUse {
                        let shared = node.multicast(subject: PassthroughSubject<Int, Never>())
                        chainConnectables.append(shared)
                        upstream = shared.eraseToAnyPublisher()
                    } else {
                        upstream = node.eraseToAnyPublisher()
                    }
                    if isWatched {
                        cancellables.append(upstream.sink { PropagateBooks.delivered(index, $0) })
                    }
                }
                for shared in chainConnectables.reversed() { connections.append(shared.connect()) }
            }
        }
        for source in 0..<shape.sources { subjects[source].send(source + 1) }
        books.resetCounts()
        var value = shape.sources
        let region = MeasuredRegion.begin()
        for source in shape.setSources {
            value &+= 1
            subjects[Int(source)].send(value)
        }
        let measured = region.end()
        for connection in connections { connection.cancel() }
        for cancellable in cancellables { cancellable.cancel() }
        return (measured.elapsedNanoseconds, measured.allocations)
    }
}
#endif
