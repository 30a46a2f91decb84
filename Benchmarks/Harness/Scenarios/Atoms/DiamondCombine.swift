#if canImport(Combine)
import Combine
#elseif canImport(OpenCombine)
import OpenCombine
#endif

#if canImport(Combine) || canImport(OpenCombine)
/// `atoms-diamond` on plain OpenCombine (Combine on Apple platforms): the
/// source a `CurrentValueSubject`, each middle its `.map` (counted), and the
/// bottom the sum of the 1,000 middles through a balanced tree of
/// `combineLatest` pairs, ten levels deep, each pair `.map`ped to its sum,
/// the root's map being the bottom's computation (counted); a `sink`
/// watches it. (OpenCombine has no `combineLatest`: the harness's own,
/// `Support/CombineLatest.swift`, stands in for it on Linux.)
///
/// `combineLatest` emits whenever one of its inputs does, so each set
/// reaches the bottom 1,000 times, once per middle, all but the last with
/// some middles still at the old value: the glitches the scenario counts.
/// The balanced tree keeps each middle's path to the bottom at ten pairs
/// (a chain of 999 would be 999 deep).
enum DiamondCombine {
    typealias Books = AtomsDiamondScenario.Books

    static func run(sets: Int) -> (elapsed: UInt64, allocations: AllocationCount?) {
        let subject = CurrentValueSubject<Int, Never>(0)
        var level: [AnyPublisher<Int, Never>] = (0..<AtomsDiamondScenario.width).map { _ in
            subject.map { value -> Int in
                Books.middleRecomputations &+= 1
                return value
            }.eraseToAnyPublisher()
        }
        while level.count > 2 {
            level = stride(from: 0, to: level.count, by: 2).map { start in
                start + 1 < level.count
                    ? level[start].combineLatest(level[start + 1]).map { $0 &+ $1 }.eraseToAnyPublisher()
                    : level[start]
            }
        }
        let bottom = level[0].combineLatest(level[1]).map { left, right -> Int in
            Books.bottomRecomputations &+= 1
            return left &+ right
        }
        let sink = bottom.sink { Books.bottomSaw($0) }
        Books.settingValue = AtomsDiamondScenario.warmUpValue
        subject.send(AtomsDiamondScenario.warmUpValue)
        Books.reset()
        let region = MeasuredRegion.begin()
        for value in 1...max(sets, 1) {
            Books.settingValue = value
            subject.send(value)
        }
        let measured = region.end()
        sink.cancel()
        return (measured.elapsedNanoseconds, measured.allocations)
    }
}
#endif
