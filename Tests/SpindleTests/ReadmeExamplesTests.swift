import Dispatch
import Foundation
@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport

// Every ```swift snippet of README.md, as literally as possible, run and
// checked against what the README says about it. Keep the two in step: when
// a snippet changes, change its mirror here (and the other way round).
// The one exception is the `Package.swift` of "Using Spindle as a
// dependency": a manifest cannot live in a test (it was checked by building a
// throwaway package against a local copy of Spindle).
//
// `Levels`, `LevelsEvent`, `leftEffect` and `rightEffect` are the README's
// declarations, word for word, in LevelsExampleTests.swift; the first test
// below also repeats them locally, so that snippet is checked verbatim on its
// own. The README's reducer is a function, while LevelsExampleTests names a
// `Reducer` value `levelsReducer`; both coexist (different kinds of
// declaration), and `Reducer(levelsReducer)` picks this one.

// README, "The levels example": the reducer.
@Sendable func levelsReducer(_ state: Levels, _ event: LevelsEvent) -> Levels {
    var state = state
    switch event {
    case .increaseLeft: state.left += 1
    case .decreaseRight: state.right -= 1
    }
    return state
}

// README, "Feedback forms": an async function.
@Sendable func slowLeft(_ state: Levels) async -> LevelsEvent? {
    try? await Task.sleep(for: .milliseconds(10))
    return state.left < state.right ? .increaseLeft : nil
}

// README, "Feedback forms": an async throwing function.
@Sendable func syncRight(_ state: Levels) async throws -> LevelsEvent? {
    try await Task.sleep(for: .milliseconds(50))  // throws when the run is cancelled
    return state.left < state.right ? .decreaseRight : nil
}

// README, "Feedback forms": a function returning an `AsyncSequence`.
// Emits .increaseLeft once a second while the run lasts.
@Sendable func ticker(_ state: Levels) -> AsyncStream<LevelsEvent> {
    AsyncStream { continuation in
        let task = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                continuation.yield(.increaseLeft)
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
    }
}

// README, "Feedback forms": with dependencies.
struct Limits: Sendable { let maxLeft: Int }

@Sendable func cappedLeft(_ limits: Limits, _ state: Levels) -> LevelsEvent? {
    state.left < min(limits.maxLeft, state.right) ? .increaseLeft : nil
}

// README, "Using Spindle in a UI (UISpin)": the contact screen.
struct Contact: Equatable, Sendable { var name = "" }
enum ContactEvent: Sendable { case rename(String) }

let contactSpin = Spin<Contact, ContactEvent>(initialState: Contact()) {
    Reducer { contact, event in
        switch event {
        case .rename(let name): return Contact(name: name)
        }
    }
}

final class ContactScreen {
    let uiSpin: UISpin<Contact, ContactEvent>

    init(renderOn queue: DispatchQueue = .main) {
        uiSpin = UISpin(spin: contactSpin, renderOn: queue)
        uiSpin.render(on: self, using: { $0.render(state:) })
        uiSpin.start()
    }

    func render(state: Contact) {
        print("name: \(state.name)")
    }
}

/// A second container for the README's UISpin, recording what it renders
/// (not from the README).
private final class ContactProbe {
    let names = Recorder<String>()
    func render(state: Contact) { names.append(state.name) }
}

/// An error for the effect-error test (not from the README).
private struct ReadmeEffectFailure: Error, Equatable {}

/// Stops `loop` if the test is still running after `seconds`, so that a
/// README `for await` over `loop.states` ends (the stream ends at stop)
/// instead of hanging the suite when the expected state never comes.
private func readmeWatchdog<S: Sendable, E: Sendable>(
    _ loop: SpinLoop<S, E>, seconds: Double = hangGuardSeconds
) -> Task<Void, Never> {
    Task {
        do { try await Task.sleep(for: .seconds(seconds)) } catch { return }
        await loop.stop()
    }
}

@Suite struct ReadmeExamplesTests {
    // MARK: The levels example

    @Test func levelsExampleConvergesWithBothSyntaxes() async {
        // README, "The levels example": the declarations, verbatim.
        struct Levels: Equatable, Sendable {
            var left: Int
            var right: Int
        }

        enum LevelsEvent: Sendable {
            case increaseLeft
            case decreaseRight
        }

        // The reducer: pure, no side effects.
        @Sendable func levelsReducer(_ state: Levels, _ event: LevelsEvent) -> Levels {
            var state = state
            switch event {
            case .increaseLeft: state.left += 1
            case .decreaseRight: state.right -= 1
            }
            return state
        }

        // Two feedbacks: each looks at a state and may return an event.
        @Sendable func leftEffect(_ state: Levels) -> LevelsEvent? {
            state.left < state.right ? .increaseLeft : nil
        }

        @Sendable func rightEffect(_ state: Levels) -> LevelsEvent? {
            state.left < state.right ? .decreaseRight : nil
        }

        // README: the result builder.
        let builderSpin: Spin<Levels, LevelsEvent>
        do {
            let spin = Spin(initialState: Levels(left: 0, right: 10)) {
                Feedback(effect: leftEffect)
                Feedback(effect: rightEffect)
                Reducer(levelsReducer)
            }
            builderSpin = spin
        }

        // README: the Spinner chain.
        let spinnerSpin: Spin<Levels, LevelsEvent>
        do {
            let spin = Spinner
                .initialState(Levels(left: 0, right: 10))
                .feedback(Feedback(effect: leftEffect))
                .feedback(Feedback(effect: rightEffect))
                .reducer(Reducer(levelsReducer))
            spinnerSpin = spin
        }

        for spin in [builderSpin, spinnerSpin] {
            #expect(spin.initialState == Levels(left: 0, right: 10))
            #expect(spin.feedbacks.count == 2)

            // README: start, emit, state, states, stop.
            let loop = spin.start()
            let watchdog = readmeWatchdog(loop)

            // Emit from any thread. The result is discardable.
            loop.emit(.increaseLeft)

            // The latest published state, from any thread, without a lock.
            print(loop.state)

            // Every state in reduction order, starting with the current one.
            var seen: [Levels] = []
            for await state in loop.states() {
                print(state)
                seen.append(state)
                if state.left >= state.right { break }
            }

            // The README: left running, the loop settles at (10, 0), here
            // (11, 0) because of the extra .increaseLeft. Each of the ten
            // states with left < right (one per gap, 10 down to 1) makes both
            // feedbacks emit.
            #expect(await eventually { loop.state == Levels(left: 11, right: 0) })

            // Stop: reduce what was accepted, cancel effects, end the streams, join the thread.
            await loop.stop()
            watchdog.cancel()

            // The levels met (the watchdog did not have to end the stream).
            #expect(seen.last.map { $0.left >= $0.right } == true)
            #expect(loop.isStopped)
            #expect(loop.state == Levels(left: 11, right: 0))
            #expect(loop.statistics.reducedEvents == 1 + 2 * 10)
            // Reduction order: each state seen is one event after the previous.
            for (previous, next) in zip(seen, seen.dropFirst()) {
                #expect((next.left - previous.left) + (previous.right - next.right) == 1)
            }
        }
    }

    // MARK: Feedback forms

    @Test func syncClosureFeedbackRaisesTheLeftLevel() async {
        let left = Feedback<Levels, LevelsEvent>(effect: { state in
            state.left < state.right ? .increaseLeft : nil
        })

        let loop = Spin(initialState: Levels(left: 0, right: 10)) {
            left
            Reducer(levelsReducer)
        }.start()
        #expect(await eventually { loop.state == Levels(left: 10, right: 10) })
        let report = await loop.stop()
        // One feedback, one event per state: it stops exactly at the meeting point.
        #expect(loop.state == Levels(left: 10, right: 10))
        #expect(report.reduced == 10)
    }

    @Test func asyncFeedbackEmitsUnlessCancelledMeanwhile() async {
        let slow = Feedback(effect: slowLeft)

        let loop = Spin(initialState: Levels(left: 0, right: 10)) {
            slow
            Reducer(levelsReducer)
        }.start()
        // Three events of our own: a new state cancels the run in flight, if any.
        for _ in 0..<3 { loop.emit(.increaseLeft) }
        // Every state with left < 10 starts one run (left = 0...9). Each run
        // returns .increaseLeft; it is reduced if it came before its run was
        // cancelled, and discarded (and counted) if it came after.
        let settled = await eventually {
            let statistics = loop.statistics
            return loop.state.left + statistics.lateEventsDiscarded == 10 + 3
                && statistics.effectRunsStarted == loop.state.left + 1
        }
        #expect(settled)
        #expect(loop.state.left >= 10)
        #expect(loop.statistics.effectErrors == 0)
        await loop.stop()
    }

    @Test func asyncThrowingFeedbackRunsAndCancellationIsNotReported() async {
        let spin = Spin(initialState: Levels(left: 0, right: 10)) {
            Feedback(effect: leftEffect)
            Feedback(effect: syncRight)
            Reducer(levelsReducer)
        }
        let loop = spin.start(options: SpinOptions(onEffectError: { error in
            print("feedback \(error.feedbackIndex) threw \(error.underlying)")
        }))

        // syncRight starts one run per state; the runs that a newer state
        // cancels throw CancellationError from Task.sleep, which never
        // reaches the hook.
        #expect(await eventually {
            loop.state.left >= loop.state.right
                && loop.statistics.effectRunsStarted == loop.statistics.reducedEvents + 1
        })
        #expect(loop.statistics.effectErrors == 0)
        await loop.stop()
        #expect(loop.statistics.effectErrors == 0)
    }

    @Test func thrownEffectErrorReachesTheHookAndTheLoopKeepsRunning() async {
        // Not a README snippet: the prose around the syncRight one. An error
        // is wrapped in an EffectError (0-based feedback index, underlying
        // error), passed to onEffectError, and the loop keeps running.
        let errors = Recorder<EffectError>()
        let loop = Spin(initialState: Levels(left: 0, right: 10)) {
            Feedback(effect: leftEffect)
            Feedback(effect: { (state: Levels) async throws -> LevelsEvent? in
                if state == Levels(left: 10, right: 10) { throw ReadmeEffectFailure() }
                return nil
            })
            Reducer(levelsReducer)
        }.start(options: SpinOptions(onEffectError: { error in errors.append(error) }))
        #expect(await eventually { errors.count == 1 && loop.state.left == 10 })
        #expect(loop.emit(.decreaseRight) == .accepted)
        #expect(await eventually { loop.state.right == 9 })
        await loop.stop()
        #expect(errors.values.map(\.feedbackIndex) == [1])
        #expect(errors.values.allSatisfy { $0.underlying is ReadmeEffectFailure })
        #expect(loop.statistics.effectErrors == 1)
    }

    @Test func asyncSequenceFeedbackEmitsItsElementsAndANewStateCancelsIt() async {
        let ticking = Feedback(effect: ticker)

        let loop = Spin(initialState: Levels(left: 0, right: 10)) {
            ticking
            Reducer(levelsReducer)
        }.start()
        // About a second in, the first tick makes a new state, which cancels
        // the first iteration and starts a second one.
        #expect(await eventually {
            loop.state.left >= 1 && loop.statistics.effectRunsCancelled >= 1
        })
        #expect(loop.statistics.effectRunsStarted >= 2)
        await loop.stop()
    }

    @Test func filteredOutStateStartsNothingAndCancelsNothing() async {
        let ticksWhileApart = Feedback(effect: ticker, filteredBy: { $0.left < $0.right })

        let loop = Spin(initialState: Levels(left: 9, right: 10)) {
            ticksWhileApart
            Reducer(levelsReducer)
        }.start()
        // The first tick makes (10, 10): filtered out, so the iteration started
        // for (9, 10) is not cancelled, and its second tick makes (11, 10).
        #expect(await eventually { loop.state.left >= 11 })
        #expect(loop.statistics.effectRunsStarted == 1)
        #expect(loop.statistics.effectRunsCancelled == 0)
        await loop.stop()
    }

    @Test func lensedFeedbackSeesOnlyTheRightLevel() async {
        let watchRight = Feedback<Levels, LevelsEvent>(
            effect: { (right: Int) in right > 5 ? .decreaseRight : nil },
            lensingOn: \.right
        )

        let loop = Spin(initialState: Levels(left: 0, right: 10)) {
            watchRight
            Reducer(levelsReducer)
        }.start()
        #expect(await eventually { loop.state.right == 5 })
        let report = await loop.stop()
        #expect(loop.state == Levels(left: 0, right: 5))
        #expect(report.reduced == 5)
    }

    @Test func dependencyIsPassedBeforeTheState() async {
        let capped = Feedback(effect: cappedLeft, dep1: Limits(maxLeft: 8))

        let loop = Spin(initialState: Levels(left: 0, right: 10)) {
            capped
            Reducer(levelsReducer)
        }.start()
        #expect(await eventually { loop.state.left == 8 })
        let report = await loop.stop()
        #expect(loop.state == Levels(left: 8, right: 10))
        #expect(report.reduced == 8)
    }

    @Test func feedbackQueueIsTheGivenOneThenTheSpinsThenItsOwn() async {
        let effects = DispatchQueue(label: "levels.effects")

        let a = Feedback(effect: leftEffect, on: effects)       // label form
        let b = Feedback(effect: rightEffect).execute(on: effects)  // method form

        // Default queue for every feedback of the spin that names none:
        let spin = Spin(initialState: Levels(left: 0, right: 10), executeOn: effects) {
            Feedback(effect: leftEffect)
            Feedback(effect: rightEffect)
            Reducer(levelsReducer)
        }
        // The Spinner syntax takes it too: Spinner.initialState(s, executeOn: effects)

        #expect(spin.executionQueue === effects)
        let spinner = Spinner.initialState(Levels(left: 0, right: 10), executeOn: effects)
            .feedback(a)
            .feedback(b)
            .reducer(Reducer(levelsReducer))
        #expect(spinner.executionQueue === effects)
        for levels in [spin, spinner] {
            let loop = levels.start()
            #expect(await eventually { loop.state == Levels(left: 10, right: 0) })
            await loop.stop()
        }

        // Where each form runs, seen from inside the effect.
        let key = DispatchSpecificKey<String>()
        effects.setSpecific(key: key, value: "levels.effects")
        let seen = Recorder<String>()
        @Sendable func probe(_ name: String) -> @Sendable (Levels) -> LevelsEvent? {
            { _ in
                seen.append("\(name): \(DispatchQueue.getSpecific(key: key) ?? "another queue")")
                return nil
            }
        }
        let spinQueue = Spin(initialState: Levels(left: 0, right: 10), executeOn: effects) {
            Feedback(effect: probe("on: wins over executeOn:"), on: DispatchQueue(label: "elsewhere"))
            Feedback(effect: probe("spin executeOn:"))
            Reducer(levelsReducer)
        }
        let noSpinQueue = Spin(initialState: Levels(left: 0, right: 10)) {
            Feedback(effect: probe("label form"), on: effects)
            Feedback(effect: probe("method form")).execute(on: effects)
            Feedback(effect: probe("no queue named"))
            Reducer(levelsReducer)
        }
        let loops = [spinQueue.start(), noSpinQueue.start()]
        for loop in loops { loop.emit(.increaseLeft) }
        // Each of the five feedbacks sees the initial state and the new one.
        #expect(await eventually { seen.count == 10 })
        for loop in loops { await loop.stop() }
        #expect(Set(seen.values) == [
            "on: wins over executeOn:: another queue",
            "spin executeOn:: levels.effects",
            "label form: levels.effects",
            "method form: levels.effects",
            "no queue named: another queue",
        ])
    }

    @Test func reducerThreadFeedbackRunsInlineOnTheReducerThread() async {
        let inline = Feedback(effect: leftEffect).executeOnReducerThread()

        // Not from the README: which thread made each state, and which
        // thread each feedback call ran on.
        let reductions = Recorder<(left: Int, thread: UInt)>()
        let calls = Recorder<(left: Int, thread: UInt, name: String?)>()
        let loop = Spin(initialState: Levels(left: 0, right: 10)) {
            inline
            Feedback<Levels, LevelsEvent>(effect: { state in
                calls.append((state.left, currentThreadID(), Thread.current.name))
                return nil
            }).executeOnReducerThread()
            Reducer<Levels, LevelsEvent> { state, event in
                let next = levelsReducer(state, event)
                reductions.append((next.left, currentThreadID()))
                return next
            }
        }.start()
        #expect(await eventually { loop.state == Levels(left: 10, right: 10) })
        let report = await loop.stop()
        #expect(report.reduced == 10)
        // The initial state and the ten new ones, in order, each right after
        // its reduction on the thread that made it: a thread of the loop's
        // executor, the shared pool (threads "spindle-shared-N", cut to the
        // 15 bytes Linux keeps).
        #expect(calls.values.map(\.left) == Array(0...10))
        #expect(reductions.values.map(\.left) == Array(1...10))
        for (call, reduction) in zip(calls.values.dropFirst(), reductions.values) {
            #expect(call.thread == reduction.thread, "state \(call.left)")
        }
        #expect(calls.values.allSatisfy { $0.name?.hasPrefix("spindle-shared") == true },
                "\(calls.values.map(\.name))")
    }

    // MARK: Execution strategies

    @Test func continueOnNewStateReducesEveryEventOfEveryRun() async {
        let everyRunCounts = Feedback(effect: slowLeft, applying: .continueOnNewState)

        let loop = Spin(initialState: Levels(left: 0, right: 5)) {
            everyRunCounts
            Reducer(levelsReducer)
        }.start()
        for _ in 0..<3 { loop.emit(.increaseLeft) }
        // The five states with left < 5 each start a run that returns
        // .increaseLeft, and none is cancelled: 5 + our 3 events.
        #expect(await eventually { loop.state.left == 8 })
        let statistics = loop.statistics
        #expect(statistics.effectRunsCancelled == 0)
        #expect(statistics.lateEventsDiscarded == 0)
        await loop.stop()
        #expect(loop.state == Levels(left: 8, right: 5))
    }

    // MARK: Gears

    @Test func gearConnectsTheCounterAndTheLapBoard() async throws {
        enum GearEvent: Sendable, Equatable {
            case counterReachedTen
            case resetCounter
        }

        let gear = Gear<GearEvent>()

        // Spin 1: the counter.
        enum CounterEvent: Sendable { case increase, reset }

        @Sendable func countUp(_ count: Int) -> CounterEvent? {
            count < 10 ? .increase : nil
        }

        @Sendable func counterReducer(_ count: Int, _ event: CounterEvent) -> Int {
            switch event {
            case .increase: return count + 1
            case .reset: return 0
            }
        }

        let counterSpin = Spin<Int, CounterEvent>(initialState: 0) {
            Feedback(effect: countUp)
            // state → gear, short form: when the state is 10, propagate .counterReachedTen
            Feedback(attachedTo: gear, catching: 10, propagating: .counterReachedTen)
            // gear → loop, short form: on .resetCounter, emit .reset
            Feedback(attachedTo: gear, catching: .resetCounter, emitting: .reset)
            Reducer(counterReducer)
        }

        // Spin 2: the lap board.
        struct Board: Equatable, Sendable { var laps = 0 }
        enum BoardEvent: Sendable { case lapCompleted }

        @Sendable func boardReducer(_ board: Board, _ event: BoardEvent) -> Board {
            switch event {
            case .lapCompleted: return Board(laps: board.laps + 1)
            }
        }

        let boardSpin = Spin<Board, BoardEvent>(initialState: Board()) {
            // gear → loop, closure form
            Feedback(attachedTo: gear, propagating: { (gearEvent: GearEvent) -> BoardEvent? in
                gearEvent == .counterReachedTen ? .lapCompleted : nil
            })
            // state → gear, closure form
            Feedback(attachedTo: gear, propagating: { (board: Board) -> GearEvent? in
                (1..<3).contains(board.laps) ? .resetCounter : nil
            })
            Reducer(boardReducer)
        }

        // Start the listener first: a gear delivers only to loops attached at that moment.
        let board = boardSpin.start()
        #expect(gear.attachedCount == 1)
        let counter = counterSpin.start()
        #expect(gear.attachedCount == 2)
        let watchdog = readmeWatchdog(board)

        for await state in board.states() where state.laps == 3 { break }
        await counter.stop()
        await board.stop()
        watchdog.cancel()

        // Three laps: the counter was reset twice and reached ten three times.
        #expect(board.state == Board(laps: 3))
        #expect(counter.state == 10)
        #expect(counter.statistics.reducedEvents == 3 * 10 + 2)
        // Each gear → loop feedback was detached when its loop stopped.
        #expect(gear.attachedCount == 0)
    }

    // MARK: Using Spindle with async/await

    @Test func streamFormFeedbackRaisesTheLeftLevelForEveryStateBelowTheRight() async {
        // Raises the left level for every state where it is below the right one.
        let balancing = Feedback<Levels, LevelsEvent>(streamEffect: { states in
            states.compactMap { state in state.left < state.right ? .increaseLeft : nil }
        })

        let loop = Spin(initialState: Levels(left: 0, right: 10)) {
            balancing
            Reducer(levelsReducer)
        }.start()
        // One .increaseLeft per state with left < right: (0,10) … (9,10).
        #expect(await eventually { loop.state == Levels(left: 10, right: 10) })
        // No eleventh event: one the feedback emitted before the stop is
        // reduced by its drain, one after it is counted as discarded.
        await loop.stop()
        #expect(loop.state == Levels(left: 10, right: 10))
        #expect(loop.statistics.reducedEvents == 10)
        #expect(loop.statistics.lateEventsDiscarded == 0)
    }

    @Test func spinStreamStartsOnIterationAndBreakStopsTheLoop() async {
        let probes = ReleaseProbes()
        let printed = Recorder<Levels>()
        func print(_ state: Levels) { printed.append(state) }
        do {
            let probe = probes.probe()
            // Not in the README: tells when the stopped loop lets go of its
            // feedbacks.
            let releaseProbe = Feedback<Levels, LevelsEvent>(effect: { _ in
                _ = probe
                return nil
            })
            let spin = Spin(initialState: Levels(left: 0, right: 10)) {
                Feedback(effect: leftEffect)
                Feedback(effect: rightEffect)
                Reducer(levelsReducer)
            }.addingFeedback(releaseProbe)

            for await state in spin.stream() {
                print(state)
                if state.left >= state.right { break }  // stops the loop
            }
        }
        #expect(printed.values.first == Levels(left: 0, right: 10))
        #expect(printed.values.dropLast().allSatisfy { $0.left < $0.right })
        if let last = printed.values.last { #expect(last.left >= last.right) }
        // The loop stopped in the background and let go of its feedbacks:
        // its own objects, not the process-wide counts that other tests'
        // loops move meanwhile.
        #expect(await eventually { probes.live == 0 }, "the loop still holds its feedbacks")
    }

    @Test func spinRunRunsUntilCancelledThenThrows() async {
        let spin = Spin(initialState: Levels(left: 0, right: 10)) {
            Feedback(effect: leftEffect)
            Feedback(effect: rightEffect)
            Reducer(levelsReducer)
        }
        let loops = Recorder<SpinLoop<Levels, LevelsEvent>>()

        let running = Task {
            try await spin.run(onStart: { loop in loop.emit(.increaseLeft); loops.append(loop) })
        }
        #expect(await eventually { loops.values.first?.state == Levels(left: 11, right: 0) })
        // Later:
        running.cancel()  // stops the loop; run() throws CancellationError

        let result = await running.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(loops.values.first?.isStopped == true)
    }

    // MARK: Using Spindle in a UI (UISpin)

    @Test func contactScreenRendersAndItsBindingEmitsTheRename() async {
        let screen = ContactScreen()
        let name = screen.uiSpin.binding(for: \.name, event: { .rename($0) })
        name.set("Ada")  // emits .rename("Ada"); "name: Ada" is rendered once it is reduced

        #expect(await eventually { name.get() == "Ada" })
        let probe = ContactProbe()
        screen.uiSpin.render(on: probe, using: { $0.render(state:) })
        #expect(await eventually(within: 30) { probe.names.values == ["Ada"] })
    }

    // The command-line program, except `dispatchMain()` and `exit(0)`: a test
    // process's async main already serves the main queue while it awaits.
    @Test func commandLineProgramRendersOnTheMainQueue() async {
        let screen = ContactScreen()       // renders on the main queue
        screen.uiSpin.emit(.rename("Ada"))

        let mainKey = DispatchSpecificKey<Int>()
        DispatchQueue.main.setSpecific(key: mainKey, value: 1)
        let probe = ContactProbe()
        let onMain = Recorder<Bool>()
        screen.uiSpin.render(on: probe, using: { probe in
            { state in
                onMain.append(DispatchQueue.getSpecific(key: mainKey) == 1)
                probe.render(state: state)
            }
        })
        #expect(await eventually(within: 30) { probe.names.values.last == "Ada" })
        #expect(!onMain.values.isEmpty && onMain.values.allSatisfy { $0 })
    }

    // MARK: Options

    @Test func spinOptionsHaveTheDocumentedDefaultsAndVarFields() async {
        let defaults = SpinOptions()
        #expect(defaults.executor == nil)  // the spin's executeOn: queue, else the shared pool
        #expect(defaults.queue == .lockFree)
        #expect(defaults.onEffectError == nil)
        #expect(defaults.logger.label == "spindle")
        #expect(defaults.maxBatch == 1024)
        #expect(defaults.spinsBeforeParking == 2000)

        let spin = Spin(initialState: Levels(left: 0, right: 10)) {
            Feedback(effect: leftEffect)
            Feedback(effect: rightEffect)
            Reducer(levelsReducer)
        }

        var options = SpinOptions()                                   // the defaults
        options.queue = .bounded(capacity: 4096, overflow: .dropNewest)
        options.maxBatch = 256
        let loop = spin.start(options: options)

        #expect(options.queue == .bounded(capacity: 4096, overflow: .dropNewest))
        #expect(options.maxBatch == 256)
        // The README's levels settle at (10, 0): ten states with left < right,
        // each making both feedbacks emit.
        #expect(await eventually { loop.state == Levels(left: 10, right: 0) })
        await loop.stop()
        #expect(loop.state == Levels(left: 10, right: 0))
        #expect(loop.statistics.droppedEvents == 0)
    }

    // MARK: Emitting, stopping, statistics

    @Test func emitAnswersAcceptedDroppedOrStopped() async {
        // A reducer that blocks on the first event, so a two-slot
        // .dropNewest queue can be filled (a real reducer is pure). It
        // blocks a thread of its own, not the shared pool every test uses.
        let latch = Latch()
        let loop = Spin(initialState: Levels(left: 0, right: 10), feedbacks: [], reducer: Reducer<Levels, LevelsEvent> { state, event in
            if state.left == 0 { latch.block() }
            return levelsReducer(state, event)
        }).start(options: SpinOptions(executor: .dedicatedThread, queue: .bounded(capacity: 2, overflow: .dropNewest)))

        var answers: [EmitResult] = []
        func emit() {
            switch loop.emit(.increaseLeft) {
            case .accepted: answers.append(.accepted)  // it will be reduced exactly once (unless stopped with .discardPending)
            case .dropped: answers.append(.dropped)    // a full .bounded queue under .dropNewest refused it
            case .stopped: answers.append(.stopped)    // the loop is stopping or stopped; the event was not accepted
            }
        }

        emit()
        #expect(await eventually { latch.isBlocked })
        emit()
        emit()
        emit()
        latch.release()
        let report = await loop.stop()
        emit()

        #expect(answers == [.accepted, .accepted, .accepted, .dropped, .stopped])
        #expect(report == StopReport(reduced: 3, discarded: 0))
        #expect(loop.state == Levels(left: 3, right: 10))
        #expect(loop.statistics.droppedEvents == 1)
        #expect(loop.statistics.rejectedAfterStop == 1)
    }

    @Test func aBatchEmitAnswersWithItsCounts() async {
        let loop = Spin(initialState: Levels(left: 0, right: 10), feedbacks: [], reducer: Reducer(levelsReducer)).start()
        let result = loop.emit(contentsOf: [.increaseLeft, .decreaseRight, .increaseLeft])
        assert(result.accepted + result.dropped + result.stopped == 3)
        #expect(result == EmitBatchResult(accepted: 3, dropped: 0, stopped: 0))
        await loop.stop()
        #expect(loop.state == Levels(left: 2, right: 9))
    }

    @Test func discardingStopReportsWhatWasReducedAndDiscarded() async {
        let spin = Spinner
            .initialState(Levels(left: 0, right: 10))
            .reducer(Reducer(levelsReducer))
        let loop = spin.start()
        var accepted = 0
        for _ in 0..<10_000 where loop.emit(.increaseLeft) == .accepted { accepted += 1 }
        #expect(accepted == 10_000)

        let report = await loop.stop(.discardPending)
        print("reduced \(report.reduced), discarded \(report.discarded)")

        // Nothing lost, nothing invented: every accepted event is in one count.
        #expect(report.reduced + report.discarded == accepted)
        #expect(loop.state.left == report.reduced)
        #expect(loop.isStopped)
        let statistics = loop.statistics
        #expect(statistics.reducedEvents == report.reduced)
        #expect(statistics.discardedAtStop == report.discarded)
        // Stopping again waits for the same stop and returns the same report.
        #expect(await loop.stop() == report)
    }
}
