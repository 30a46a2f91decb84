import Dispatch
import Spindle
import Testing
import SpindleTestSupport
import SpindleQueueFixture

// Options a caller computed (a capacity of 0, a maxBatch of 0) are a start
// error the caller can handle, on every executor: the process never dies on
// them.

/// Options that cannot run a loop, with the reason's key words.
struct InvalidOptionsCase: Sendable, CustomTestStringConvertible {
    let name: String
    let options: SpinOptions
    let reasonMentions: String
    var testDescription: String { name }

    static let all: [InvalidOptionsCase] = [
        InvalidOptionsCase(name: "maxBatch 0", options: SpinOptions(maxBatch: 0), reasonMentions: "maxBatch"),
        InvalidOptionsCase(name: "maxBatch -5", options: SpinOptions(maxBatch: -5), reasonMentions: "maxBatch"),
        InvalidOptionsCase(name: "capacity 0", options: SpinOptions(queue: .bounded(capacity: 0, overflow: .block)),
                           reasonMentions: "capacity"),
        InvalidOptionsCase(name: "capacity -1", options: SpinOptions(queue: .bounded(capacity: -1, overflow: .dropNewest)),
                           reasonMentions: "capacity"),
        InvalidOptionsCase(name: "capacity 2^31", options: SpinOptions(queue: .bounded(capacity: 1 << 31, overflow: .block)),
                           reasonMentions: "capacity"),
        // A custom queue (SPI) made for another event type than the loop's.
        InvalidOptionsCase(name: "custom queue of Strings", options: SpinOptions(queue: .locked(for: String.self)),
                           reasonMentions: "String"),
    ]
}

@Suite struct InvalidOptionsTests {
    private var counterSpin: Spin<Int, Int> {
        Spin(initialState: 0) {
            Feedback<Int, Int>(effect: { (_: Int) -> Int? in nil })
            Reducer<Int, Int> { $0 + $1 }
        }
    }

    /// A loop started as a bridge (`UISpin`, a state stream) starts one: a
    /// failure kept in `startError`, the loop stopped from birth.
    private func counter(_ options: SpinOptions) -> SpinLoop<Int, Int> {
        SpinLoop(spin: counterSpin, options: options)
    }

    @Test(arguments: InvalidOptionsCase.all)
    func invalidOptionsAreAStartErrorAndTheLoopIsStoppedFromBirth(_ invalid: InvalidOptionsCase) async {
        let loop = counter(invalid.options)
        guard case .invalidOptions(let reason) = loop.startError else {
            Issue.record("startError is \(String(describing: loop.startError))")
            return
        }
        #expect(reason.contains(invalid.reasonMentions), "\(reason)")
        #expect(loop.isStopped)
        #expect(loop.emit(1) == .stopped)
        #expect(await loop.stop() == StopReport(reduced: 0, discarded: 0))
        #expect(loop.state == 0)
        #expect(loop.statistics.rejectedAfterStop == 1)
    }

    @Test(arguments: InvalidOptionsCase.all)
    func startThrowsInvalidOptions(_ invalid: InvalidOptionsCase) {
        #expect {
            _ = try Spin(initialState: 0, feedbacks: [], reducer: Reducer<Int, Int> { $0 + $1 }).start(options: invalid.options)
        } throws: { error in
            guard case .invalidOptions(let reason) = error as? SpinExecutorError else { return false }
            return reason.contains(invalid.reasonMentions)
        }
    }

    @Test(arguments: allExecutors)
    func invalidOptionsAreRefusedOnEveryExecutor(_ kind: ExecutorKind) async throws {
        try await kind.withExecutor { executor in
            var options = SpinOptions(executor: executor)
            options.maxBatch = 0
            #expect(throws: SpinExecutorError.invalidOptions(reason: "maxBatch must be at least 1 (got 0)")) {
                try counterSpin.start(options: options)
            }
            let loop = counter(options)
            #expect(loop.startError == .invalidOptions(reason: "maxBatch must be at least 1 (got 0)"))
            #expect(loop.emit(1) == .stopped)
            #expect(await loop.stop().reduced == 0)
        }
    }

    @Test(arguments: [1, 2, 1_000])
    func theBoundsThemselvesStart(capacity: Int) async {
        let loop = counter(SpinOptions(queue: .bounded(capacity: capacity, overflow: .dropNewest), maxBatch: 1))
        #expect(loop.startError == nil)
        #expect(loop.emit(2) == .accepted)
        #expect(await loop.stop().reduced == 1)
        #expect(loop.state == 2)
    }
}
