@_spi(Testing) @_spi(Benchmarks) @_spi(Tuning) import Spindle
import Testing
import SpindleTestSupport

enum SessionEvent: Sendable, Equatable {
    case loggedIn
    case loggedOut
}

@Suite struct GearTests {
    @Test func aGearCarriesEventsFromOneSpinToAnother() async throws {
        let gear = Gear<SessionEvent>()
        // The session spin propagates .loggedIn when its counter reaches 3.
        let session = try Spin(initialState: 0) {
            Feedback<Int, CounterEvent>(attachedTo: gear, toGear: { (state: Int) -> SessionEvent? in
                state == 3 ? .loggedIn : nil
            })
            Reducer(counterReducer.reduce)
        }.start()
        // The feature spin counts every .loggedIn it catches.
        let feature = try Spin(initialState: 0) {
            Feedback<Int, CounterEvent>(attachedTo: gear, catching: SessionEvent.loggedIn, emitting: .increment)
            Reducer(counterReducer.reduce)
        }.start()
        #expect(gear.attachedCount == 1)
        for _ in 0..<3 { session.emit(.increment) }
        #expect(await eventually { feature.state == 1 })
        await session.stop()
        await feature.stop()
        #expect(gear.attachedCount == 0)
        #expect(feature.state == 1)
    }

    @Test func shortSyntaxPropagatesOnAMatchingState() async throws {
        let gear = Gear<SessionEvent>()
        let received = Recorder<SessionEvent>()
        let listener = try Spin(initialState: 0) {
            Feedback<Int, CounterEvent>(attachedTo: gear, fromGear: { (event: SessionEvent) -> CounterEvent? in
                received.append(event)
                return nil
            })
            Reducer(counterReducer.reduce)
        }.start()
        let source = try Spin(initialState: 0) {
            Feedback<Int, CounterEvent>(attachedTo: gear, catching: 2, propagating: SessionEvent.loggedOut)
            Reducer(counterReducer.reduce)
        }.start()
        source.emit(.increment)
        source.emit(.increment)
        #expect(await eventually { received.values == [.loggedOut] })
        await source.stop()
        await listener.stop()
    }

    @Test func eventsGoOnlyToRunningSpins() async throws {
        let gear = Gear<SessionEvent>()
        let loop = try Spin(initialState: 0) {
            Feedback<Int, CounterEvent>(attachedTo: gear, catching: SessionEvent.loggedIn, emitting: .increment)
            Reducer(counterReducer.reduce)
        }.start()
        gear.propagate(.loggedIn)
        #expect(await eventually { loop.state == 1 })
        await loop.stop()
        gear.propagate(.loggedIn)
        #expect(loop.state == 1)
        #expect(gear.attachedCount == 0)
    }
}
