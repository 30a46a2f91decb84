import Spindle
import Testing
import SpindleTestSupport

struct Profile: Sendable, Equatable {
    var count = 0
    var name = "spin"
    var log: [String] = []
}

enum ProfileEvent: Sendable, Equatable {
    case increment
    case note(String)
}

let profileReducer = Reducer<Profile, ProfileEvent> { state, event in
    var state = state
    switch event {
    case .increment: state.count += 1
    case .note(let text): state.log.append(text)
    }
    return state
}

struct Boom: Error, Equatable {}

@Suite struct FeedbackFormTests {
    @Test func filteredFeedbackRunsOnlyForMatchingStates() async throws {
        let seen = Recorder<Int>()
        let loop = try Spin(initialState: Profile()) {
            Feedback<Profile, ProfileEvent>(
                effect: { state in
                    seen.append(state.count)
                    return nil
                },
                filteredBy: { $0.count.isMultiple(of: 2) }
            )
            Reducer(profileReducer.reduce)
        }.start()
        for _ in 0..<10 { loop.emit(.increment) }
        #expect(await eventually { seen.values.last == 10 })
        await loop.stop()
        #expect(seen.values == [0, 2, 4, 6, 8, 10])
    }

    @Test func lensedFeedbackSeesOnlyItsPartOfTheState() async throws {
        let names = Recorder<String>()
        let loop = try Spin(initialState: Profile()) {
            Feedback<Profile, ProfileEvent>(
                effect: { (name: String) -> ProfileEvent? in
                    names.append(name)
                    return nil
                },
                lensingOn: \.name
            )
            Reducer(profileReducer.reduce)
        }.start()
        #expect(await eventually { names.count == 1 })
        await loop.stop()
        #expect(names.values == ["spin"])
    }

    @Test func asyncLensedFeedbackEmits() async throws {
        let loop = try Spin(initialState: Profile()) {
            Feedback<Profile, ProfileEvent>(
                effect: { (count: Int) async -> ProfileEvent? in count < 3 ? .increment : nil },
                lensingOn: \.count
            )
            Reducer(profileReducer.reduce)
        }.start()
        #expect(await eventually { loop.state.count == 3 })
        await loop.stop()
    }

    // A function of the dependencies and the state (Spin.Swift's `dep1:`
    // forms, deprecated) is a closure that captures the dependencies.
    @Test func aFunctionOfDependenciesRunsAsAClosureThatCapturesThem() async throws {
        @Sendable func effect(prefix: String, limit: Int, state: Profile) -> ProfileEvent? {
            state.log.count < limit ? .note("\(prefix)\(state.log.count)") : nil
        }
        let loop = try Spin(initialState: Profile()) {
            Feedback(effect: { effect(prefix: "n", limit: 2, state: $0) })
            Reducer(profileReducer.reduce)
        }.start()
        #expect(await eventually { loop.state.log.count == 2 })
        await loop.stop()
        #expect(loop.state.log == ["n0", "n1"])
    }

    @Test func aThrowingAsyncEffectRunsThroughTheOneAsyncForm() async throws {
        struct Refused: Error {}
        let errors = Locked<[String]>([])
        let loop = try Spin(initialState: Profile()) {
            Feedback(effect: { (state: Profile) async throws -> ProfileEvent? in
                if state.log.count == 1 { throw Refused() }
                return state.log.isEmpty ? .note("async") : nil
            })
            Reducer(profileReducer.reduce)
        }.start(options: SpinOptions(onEffectError: { error in errors.withLock { $0.append("\(error.underlying)") } }))
        #expect(await eventually { loop.state.log == ["async"] && errors.withLock { $0.count } == 1 })
        await loop.stop()
        #expect(loop.state.log == ["async"])
    }

    @Test func anAsyncSequenceEffectEmitsEveryElement() async throws {
        let loop = try Spin(initialState: Profile()) {
            Feedback<Profile, ProfileEvent>(
                effect: { (_: Profile) -> AsyncStream<ProfileEvent> in
                    AsyncStream { continuation in
                        for index in 0..<3 { continuation.yield(.note("\(index)")) }
                        continuation.finish()
                    }
                },
                filteredBy: { $0.log.isEmpty && $0.count == 0 }
            )
            Reducer(profileReducer.reduce)
        }.start()
        #expect(await eventually { loop.state.log.count == 3 })
        await loop.stop()
        #expect(loop.state.log == ["0", "1", "2"])
    }

    @Test func aThrowingEffectReachesTheErrorHookAndTheLoopKeepsRunning() async throws {
        let errors = Recorder<Int>()
        let loop = try Spin(initialState: Profile()) {
            Feedback<Profile, ProfileEvent>(
                effect: { (state: Profile) async throws -> ProfileEvent? in
                    if state.count == 0 { throw Boom() }
                    return nil
                }
            )
            Reducer(profileReducer.reduce)
        }.start(options: SpinOptions(onEffectError: { error in
            if error.underlying is Boom { errors.append(error.feedbackIndex) }
        }))
        #expect(await eventually { errors.count == 1 })
        #expect(loop.emit(.increment) == .accepted)
        #expect(await eventually { loop.state.count == 1 })
        await loop.stop()
        #expect(errors.values == [0])
        #expect(loop.statistics.effectErrors == 1)
    }

    @Test func aThrowingSequenceEffectReachesTheErrorHook() async throws {
        struct Failing: AsyncSequence, AsyncIteratorProtocol, Sendable {
            typealias Element = ProfileEvent
            var sent = false
            mutating func next() async throws -> ProfileEvent? {
                if sent { throw Boom() }
                sent = true
                return .note("before")
            }
            func makeAsyncIterator() -> Failing { self }
        }
        let errors = Recorder<Int>()
        let loop = try Spin(initialState: Profile()) {
            Feedback<Profile, ProfileEvent>(effect: { (_: Profile) in Failing() }, filteredBy: { $0.log.isEmpty })
            Reducer(profileReducer.reduce)
        }.start(options: SpinOptions(onEffectError: { errors.append($0.feedbackIndex) }))
        #expect(await eventually { errors.count == 1 && loop.state.log == ["before"] })
        await loop.stop()
    }
}
