import Logging
import Spindle
import Testing
import SpindleTestSupport

/// A swift-log handler that keeps every message.
struct CapturingLogHandler: LogHandler {
    struct Entry: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: Logger.Metadata
    }

    let entries: Lock<[Entry]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        entries.withLock {
            $0.append(Entry(level: event.level, message: "\(event.message)", metadata: event.metadata ?? [:]))
        }
    }
}

@Suite("LoggingObserver (swift-log)")
struct LoggingObserverTests {
    private func logger(level: Logger.Level) -> (Logger, Lock<[CapturingLogHandler.Entry]>) {
        let entries = Lock<[CapturingLogHandler.Entry]>([])
        var logger = Logger(label: "test") { _ in CapturingLogHandler(entries: entries) }
        logger.logLevel = level
        return (logger, entries)
    }

    @Test("logs each reduction and effect run at the chosen level, failures at error")
    func logsAtLevel() async throws {
        let (logger, entries) = logger(level: .debug)
        let spin = Spin<Int, Int>(initialState: 0) {
            Feedback<Int, Int>(effect: { (state: Int) async throws -> Int? in
                if state == 2 { throw Boom() }
                return nil
            })
            Reducer { state, event in state + event }
        }
        let loop = try spin.observed(by: LoggingObserver(logger: logger, level: .debug))
            .start(options: SpinOptions(onEffectError: { _ in }))
        loop.emit(1)
        loop.emit(1)
        #expect(await eventually { entries.withLock { $0.contains { $0.level == .error } } })
        await loop.stop()
        let logged = entries.withLock { $0 }
        #expect(logged.first?.message == "loop started: 0")
        #expect(logged.contains { $0.level == .debug && $0.message == "reduced #1: 1 -> 1" && $0.metadata["reduction"] == "1" })
        #expect(logged.contains { $0.level == .debug && $0.message == "reduced #2: 1 -> 2" })
        #expect(logged.contains { $0.message == "effect started" && $0.metadata["feedback"] == "0" })
        #expect(logged.contains { $0.level == .error && $0.message == "effect threw: boom" })
        #expect(logged.last?.message == "loop stopped: 2 reduced, 0 discarded")
    }

    @Test("a loop that cannot start is logged at error, with the executor's reason")
    func logsAFailedStart() throws {
        let (logger, entries) = logger(level: .info)
        let spin = Spin<Int, Int>(initialState: 0) { Reducer { state, event in state + event } }
        var options = SpinOptions()
        options.maxBatch = 0
        let expected = SpinExecutorError.invalidOptions(reason: "maxBatch must be at least 1 (got 0)")
        #expect(throws: expected) { try spin.observed(by: LoggingObserver(logger: logger)).start(options: options) }
        let errors = entries.withLock { $0 }.filter { $0.level == .error }
        #expect(errors.map(\.message) == ["loop failed to start: \(expected)"])
    }

    @Test("a logger above the level gets nothing, and the loop skips per-event calls")
    func quietWhenAboveLevel() async throws {
        let (logger, entries) = logger(level: .info)
        let observer = LoggingObserver<Int, Int>(logger: logger, level: .debug)
        #expect(!observer.observesEachEvent)
        let spin = Spin<Int, Int>(initialState: 0) { Reducer { state, event in state + event } }
        let loop = try spin.observed(by: observer).start()
        loop.emit(1)
        await loop.stop()
        #expect(loop.emit(5) == .stopped)
        // Only the refusal, at warning.
        let logged = entries.withLock { $0 }
        #expect(logged.map(\.message) == ["emitted after stop, refused: 5"])
        #expect(logged.first?.level == .warning)
    }
}
