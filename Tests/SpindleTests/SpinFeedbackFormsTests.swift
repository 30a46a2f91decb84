import Dispatch
@_spi(Testing) import Spindle
import Testing
import SpindleTestSupport

// Spin.Swift's feedback forms beyond "one state in, events out": render-only
// effects, effects that take no state, merged feedbacks, closure lenses,
// lenses with filters, Result filters, and the gear forms' own labels.
@Suite struct SpinFeedbackFormsTests {
    private static func onQueue(_ key: DispatchSpecificKey<Int>) -> Bool {
        DispatchQueue.getSpecific(key: key) == 1
    }

    private static func markedQueue(_ label: String) -> (DispatchQueue, DispatchSpecificKey<Int>) {
        let queue = DispatchQueue(label: label)
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 1)
        return (queue, key)
    }

    @Test func aRenderOnlyEffectNeedsNoReturnAndSeesEveryState() async throws {
        let seen = Recorder<Int>()
        let loop = try Spin(initialState: Profile()) {
            Feedback<Profile, ProfileEvent>(effect: { profile in seen.append(profile.count) })
            Reducer(profileReducer.reduce)
        }.start()
        for _ in 0..<5 { loop.emit(.increment) }
        #expect(await eventually { seen.values.last == 5 })
        await loop.stop()
        #expect(seen.values == [0, 1, 2, 3, 4, 5])
    }

    // The inference trap (SpinBuilder's doc): a renderer names no Event, so
    // the builder needs the reducer above it, or the types named. Both
    // forms compile without annotating any feedback, and render every
    // state. (Renderer first with the reducer last and no types named does
    // not compile, with the builder's message saying so.)
    @Test func aRendererNeedsNoTypesWhenTheReducerComesFirst() async throws {
        let seen = Recorder<Int>()
        let loop = try Spin(initialState: Profile()) {
            Reducer { (profile: Profile, event: ProfileEvent) in profileReducer.reduce(profile, event) }
            Feedback { (profile: Profile) in seen.append(profile.count) }
            Feedback { (profile: Profile) -> ProfileEvent? in
                profile.count == 3 && profile.log.isEmpty ? .note("three") : nil
            }
        }.start()
        for _ in 0..<3 { loop.emit(.increment) }
        #expect(await eventually { seen.count == 5 })
        await loop.stop()
        // Three increments, then the second feedback's note (count stays 3).
        #expect(seen.values == [0, 1, 2, 3, 3])
        #expect(loop.state.log == ["three"])
    }

    @Test func aRendererComesFirstWhenTheSpinNamesItsTypes() async throws {
        let seen = Recorder<Int>()
        let loop = try Spin<Profile, ProfileEvent>(initialState: Profile()) {
            Feedback { profile in seen.append(profile.count) }
            Reducer(profileReducer.reduce)
        }.start()
        for _ in 0..<3 { loop.emit(.increment) }
        #expect(await eventually { seen.values.last == 3 })
        await loop.stop()
        #expect(seen.values == [0, 1, 2, 3])
    }

    @Test func aRenderOnlyEffectRunsOnTheQueueItNames() async throws {
        let (queue, key) = Self.markedQueue("render")
        let onQueue = Recorder<Bool>()
        let loop = try Spin(initialState: Profile()) {
            Feedback<Profile, ProfileEvent>(effect: { _ in onQueue.append(Self.onQueue(key)) }, on: queue)
            Reducer(profileReducer.reduce)
        }.start()
        loop.emit(.increment)
        #expect(await eventually { onQueue.count == 2 })
        await loop.stop()
        #expect(onQueue.values == [true, true])
    }

    @Test func anEventSourceTakingNoStateIsSubscribedOnceForTheLoopsLife() async throws {
        let subscriptions = Counter()
        let (events, input) = AsyncStream<ProfileEvent>.makeStream()
        let loop = try Spin(initialState: Profile()) {
            Feedback<Profile, ProfileEvent>(effect: { () -> AsyncStream<ProfileEvent> in
                subscriptions.add()
                return events
            })
            Reducer(profileReducer.reduce)
        }.start()
        for _ in 0..<3 { input.yield(.increment) }
        #expect(await eventually { loop.state.count == 3 })
        input.yield(.note("last"))
        #expect(await eventually { loop.state.log == ["last"] })
        await loop.stop()
        // Four states went by; the source was subscribed once.
        #expect(subscriptions.current == 1)
        input.finish()
    }

    @Test func stoppingTheLoopCancelsItsEventSource() async throws {
        let cancelled = OpenOnce()
        let loop = try Spin(initialState: Profile()) {
            Feedback<Profile, ProfileEvent>(effect: { () -> AsyncStream<ProfileEvent> in
                AsyncStream { continuation in
                    continuation.yield(.increment)
                    continuation.onTermination = { _ in cancelled.open() }
                }
            })
            Reducer(profileReducer.reduce)
        }.start()
        #expect(await eventually { loop.state.count == 1 })
        await loop.stop()
        await cancelled.wait()
        #expect(loop.emit(.increment) == .stopped)
    }

    @Test func aStartUpEffectTakingNoStateRunsOnce() async throws {
        let calls = Counter()
        let loop = try Spin(initialState: Profile()) {
            Feedback<Profile, ProfileEvent>(effect: { () -> ProfileEvent? in
                calls.add()
                return .note("started")
            })
            Reducer(profileReducer.reduce)
        }.start()
        #expect(await eventually { loop.state.log == ["started"] })
        for _ in 0..<3 { loop.emit(.increment) }
        #expect(await eventually { loop.state.count == 3 })
        await loop.stop()
        #expect(calls.current == 1)
        #expect(loop.state.log == ["started"])
    }

    @Test func mergedFeedbacksRunEachPartAndAreListedAsTheirParts() async throws {
        let rendered = Recorder<Int>()
        let spin = Spin(initialState: Profile()) {
            Feedback<Profile, ProfileEvent>(effects: [
                Feedback(effect: { (profile: Profile) in rendered.append(profile.count) }),
                Feedback(effect: { (profile: Profile) -> ProfileEvent? in profile.count < 3 ? .increment : nil }),
            ])
            Reducer(profileReducer.reduce)
        }
        #expect(spin.feedbacks.count == 2)
        let loop = try spin.start()
        #expect(await eventually { rendered.values.last == 3 })
        await loop.stop()
        #expect(rendered.values == [0, 1, 2, 3])
    }

    @Test func executeOnAMergedFeedbackMovesEveryPart() async throws {
        let (queue, key) = Self.markedQueue("merged")
        let onQueue = Recorder<Bool>()
        let loop = try Spin(initialState: Profile()) {
            Feedback<Profile, ProfileEvent>(effects: [
                Feedback(effect: { (_: Profile) in onQueue.append(Self.onQueue(key)) }),
                Feedback(effect: { (_: Profile) -> ProfileEvent? in
                    onQueue.append(Self.onQueue(key))
                    return nil
                }),
            ]).execute(on: queue)
            Reducer(profileReducer.reduce)
        }.start()
        #expect(await eventually { onQueue.count == 2 })
        await loop.stop()
        #expect(onQueue.values == [true, true])
    }

    @Test func uiEffectsRenderEveryStateAndSubscribeToTheUsersEventsOnce() async throws {
        let (queue, key) = Self.markedQueue("ui")
        let rendered = Recorder<Int>()
        let renderedOnQueue = Recorder<Bool>()
        let (taps, tap) = AsyncStream<ProfileEvent>.makeStream()
        let loop = try Spin(initialState: Profile()) {
            Feedback<Profile, ProfileEvent>(
                uiEffects: { profile in
                    rendered.append(profile.count)
                    renderedOnQueue.append(Self.onQueue(key))
                },
                { taps },
                on: queue)
            Reducer(profileReducer.reduce)
        }.start()
        tap.yield(.increment)
        tap.yield(.increment)
        #expect(await eventually { rendered.values.last == 2 })
        await loop.stop()
        tap.finish()
        #expect(rendered.values == [0, 1, 2])
        #expect(renderedOnQueue.values.allSatisfy { $0 })
    }

    @Test func aClosureLensHandsTheEffectItsPart() async throws {
        let names = Recorder<String>()
        let loop = try Spin(initialState: Profile()) {
            Feedback<Profile, ProfileEvent>(
                effect: { (name: String) -> ProfileEvent? in
                    names.append(name)
                    return nil
                },
                lensingOn: { $0.name.uppercased() })
            Reducer(profileReducer.reduce)
        }.start()
        #expect(await eventually { names.count == 1 })
        await loop.stop()
        #expect(names.values == ["SPIN"])
    }

    @Test(arguments: [true, false])
    func aLensWithAFilterRunsOnlyForPartsThatPass(keyPathLens: Bool) async throws {
        let seen = Recorder<Int>()
        let effect: @Sendable (Int) -> ProfileEvent? = { count in
            seen.append(count)
            return nil
        }
        let isEven: @Sendable (Int) -> Bool = { $0.isMultiple(of: 2) }
        let feedback = keyPathLens
            ? Feedback<Profile, ProfileEvent>(effect: effect, lensingOn: \.count, filteredBy: isEven)
            : Feedback<Profile, ProfileEvent>(effect: effect, lensingOn: { $0.count }, filteredBy: isEven)
        let loop = try Spin(initialState: Profile(), feedbacks: [feedback], reducer: profileReducer).start()
        for _ in 0..<7 { loop.emit(.increment) }
        #expect(await eventually { loop.state.count == 7 })
        await loop.stop()
        #expect(seen.values == [0, 2, 4, 6])
    }

    @Test func aFilteredOutPartNeitherStartsNorCancelsAnAsyncRun() async throws {
        let finished = Recorder<Int>()
        let release = OpenOnce()
        let loop = try Spin(initialState: Profile()) {
            Feedback<Profile, ProfileEvent>(
                effect: { (count: Int) async -> ProfileEvent? in
                    await release.wait()
                    // -1: the run was cancelled (the wait ignores cancellation).
                    finished.append(Task.isCancelled ? -1 : count)
                    return nil
                },
                lensingOn: \.count,
                filteredBy: { $0 == 0 })
            Reducer(profileReducer.reduce)
        }.start()
        // States 1...3 are filtered out: the run for 0 is not cancelled.
        for _ in 0..<3 { loop.emit(.increment) }
        #expect(await eventually { loop.state.count == 3 })
        release.open()
        #expect(await eventually { finished.values == [0] })
        await loop.stop()
    }

    @Test func aResultFilterSelectsTheStatesAndExtractsThePart() async throws {
        let seen = Recorder<String>()
        let loop = try Spin(initialState: Profile()) {
            Feedback<Profile, ProfileEvent>(
                effect: { (label: String) -> ProfileEvent? in
                    seen.append(label)
                    return nil
                },
                filteredByResult: { profile in
                    profile.count.isMultiple(of: 3)
                        ? .success("count \(profile.count)")
                        : .failure(.effectIsNotExecuted)
                })
            Reducer(profileReducer.reduce)
        }.start()
        for _ in 0..<6 { loop.emit(.increment) }
        #expect(await eventually { seen.count == 3 })
        await loop.stop()
        #expect(seen.values == ["count 0", "count 3", "count 6"])
    }

    @Test func aResultFilterWorksForAsyncSequenceEffects() async throws {
        let loop = try Spin(initialState: Profile()) {
            Feedback<Profile, ProfileEvent>(
                effect: { (count: Int) -> AsyncStream<ProfileEvent> in
                    AsyncStream { continuation in
                        continuation.yield(.note("saw \(count)"))
                        continuation.finish()
                    }
                },
                filteredByResult: { profile in
                    // Once: the note it emits makes a new state that must not pass.
                    profile.count == 1 && profile.log.isEmpty
                        ? .success(profile.count) : .failure(.effectIsNotExecuted)
                })
            Reducer(profileReducer.reduce)
        }.start()
        loop.emit(.increment)
        #expect(await eventually { loop.state.log == ["saw 1"] })
        loop.emit(.increment)
        #expect(await eventually { loop.state.count == 2 })
        await loop.stop()
        #expect(loop.state.log == ["saw 1"])
    }

    @Test func theGearFormsLabelsTellTheDirectionsApartWhenEveryTypeIsTheSame() async throws {
        // State, Event and the gear's events are all Int: the closure
        // alone cannot say which direction is meant; the labels can.
        let gear = Gear<Int>()
        let sender = try Spin<Int, Int>(initialState: 0) {
            Feedback(attachedTo: gear, toGear: { (state: Int) -> Int? in state > 0 ? state * 10 : nil })
            Reducer { state, event in state + event }
        }.start()
        let receiver = try Spin<Int, Int>(initialState: 0) {
            Feedback(attachedTo: gear, fromGear: { (gearEvent: Int) -> Int? in gearEvent })
            Reducer { state, event in state + event }
        }.start()
        #expect(await eventually { gear.attachedCount == 1 })
        sender.emit(1)
        #expect(await eventually { receiver.state == 10 })
        await sender.stop()
        await receiver.stop()
    }

    @Test func aGearToLoopFeedbackRunsItsTransformOnTheQueueItNames() async throws {
        let (queue, key) = Self.markedQueue("gear")
        let onQueue = Recorder<Bool>()
        let gear = Gear<String>()
        let loop = try Spin(initialState: Profile()) {
            Feedback<Profile, ProfileEvent>(
                attachedTo: gear,
                fromGear: { (text: String) -> ProfileEvent? in
                    onQueue.append(Self.onQueue(key))
                    return .note(text)
                },
                on: queue)
            Reducer(profileReducer.reduce)
        }.start()
        #expect(await eventually { gear.attachedCount == 1 })
        gear.propagate("a")
        gear.propagate("b")
        #expect(await eventually { loop.state.log == ["a", "b"] })
        await loop.stop()
        #expect(onQueue.values == [true, true])
    }

    @Test func aGearsEventStreamYieldsWhatIsPropagatedAndLeavesWhenDropped() async {
        let gear = Gear<Int>()
        var events: AsyncStream<Int>? = gear.events()
        #expect(gear.attachedCount == 1)
        for value in 1...3 { gear.propagate(value) }
        var received: [Int] = []
        var iterator = events!.makeAsyncIterator()
        while received.count < 3, let value = await iterator.next() { received.append(value) }
        #expect(received == [1, 2, 3])
        events = nil
        _ = iterator
        iterator = AsyncStream<Int> { $0.finish() }.makeAsyncIterator()
        #expect(await eventually { gear.attachedCount == 0 })
    }

    // MARK: Conflation (StateDelivery.latestState)

    @Test func aConflatedFeedbackOnAQueueHasAtMostOneStateWaitingAndGetsTheLatest() async throws {
        let (queue, _) = Self.markedQueue("conflated")
        let seen = Recorder<Int>()
        let held = DispatchSemaphore(value: 0)
        queue.async { held.wait() }
        let loop = try Spin(initialState: Profile()) {
            Feedback<Profile, ProfileEvent>(effect: { (profile: Profile) in seen.append(profile.count) }, on: queue)
                .delivering(.latestState)
            Reducer(profileReducer.reduce)
        }.start()
        for _ in 0..<500 { loop.emit(.increment) }
        #expect(await eventually { loop.state.count == 500 })
        held.signal()
        #expect(await eventually { seen.values.last == 500 })
        await loop.stop()
        // The initial state, always, then only the latest.
        #expect(seen.values == [0, 500])
    }

    @Test(arguments: ExecutorKind.allCases)
    func aConflatedInlineFeedbackRunsOncePerBatchWithItsLastState(executor: ExecutorKind) async throws {
        let seen = Recorder<Int>()
        try await executor.withExecutor { spinExecutor in
            let loop = try Spin(initialState: Profile()) {
                Feedback<Profile, ProfileEvent>(effect: { (profile: Profile) in seen.append(profile.count) })
                    .delivering(.latestState)
                Reducer(profileReducer.reduce)
            }.start(options: SpinOptions(executor: spinExecutor))
            loop.emit(contentsOf: Array(repeating: ProfileEvent.increment, count: 300))
            #expect(await eventually { seen.values.last == 300 })
            await loop.stop()
        }
        // The initial state, then one state per batch: fewer than 301, in order.
        #expect(seen.values.first == 0)
        #expect(seen.count < 301)
        #expect(seen.values == seen.values.sorted())
    }

    @Test(arguments: ExecutorKind.allCases)
    func aConflatedInlineFeedbackThatEmitsKeepsTheLoopGoing(executor: ExecutorKind) async throws {
        // Its events are emitted after the batch, into the runner's own
        // queue: the loop must not go idle with them waiting.
        try await executor.withExecutor { spinExecutor in
            let loop = try Spin(initialState: Profile()) {
                Feedback<Profile, ProfileEvent>(effect: { (profile: Profile) -> ProfileEvent? in
                    profile.count < 1_000 ? .increment : nil
                }).delivering(.latestState)
                Reducer(profileReducer.reduce)
            }.start(options: SpinOptions(executor: spinExecutor))
            #expect(await eventually { loop.state.count == 1_000 })
            await loop.stop()
        }
    }
}
