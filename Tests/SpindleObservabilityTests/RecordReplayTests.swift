import Dispatch
import Foundation
import Spindle
import SpindleReplay
import Testing
import SpindleTestSupport

/// A state whose value depends on the order of every event: replaying in
/// another order gives another digest.
struct Ledger: Codable, Sendable, Equatable {
    var digest: UInt64 = 14_695_981_039_346_656_037
    var count = 0
    var lastSequence: [Int] = [-1, -1, -1, -1]
    var bonuses = 0
}

enum LedgerEvent: Codable, Sendable, Equatable {
    case item(producer: Int, sequence: Int)
    case bonus(Int)
}

let ledgerReducer = Reducer<Ledger, LedgerEvent> { state, event in
    var state = state
    switch event {
    case .item(let producer, let sequence):
        precondition(sequence == state.lastSequence[producer] + 1, "producer order broken")
        state.lastSequence[producer] = sequence
        state.digest = (state.digest ^ UInt64(producer &* 1_000_003 &+ sequence)) &* 1_099_511_628_211
    case .bonus(let value):
        state.bonuses += 1
        state.digest = (state.digest ^ UInt64(value)) &* 1_099_511_628_211
    }
    state.count += 1
    return state
}

/// Collects the recorder's lines in memory.
final class MemorySink: Sendable {
    private let data = Lock(Data())
    var contents: Data { data.withLock { $0 } }
    func write(_ chunk: Data) { data.withLock { $0.append(chunk) } }
}

@Suite("Record and replay (SpindleReplay)")
struct RecordReplayTests {
    @Test("a concurrent run, recorded to a file, replays to every state and the same final state")
    func concurrentRunReplays() async throws {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("spindle-recording-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        let recorder = try SpinRecorder<Ledger, LedgerEvent>(file: url)
        let seen = Lock<[Ledger]>([])
        let spin = Spin<Ledger, LedgerEvent>(
            initialState: Ledger(),
            feedbacks: [
                // An effect's events interleave with the producers'.
                Feedback(effect: { (state: Ledger) -> LedgerEvent? in
                    state.count % 97 == 0 ? .bonus(state.count) : nil
                }, applying: .continueOnNewState),
            ],
            reducer: ledgerReducer)
        let loop = try spin.observed(by: recorder).start()
        let states = loop.states(bufferingPolicy: .unbounded)
        let collector = Task { for await state in states { seen.withLock { $0.append(state) } } }
        // The initial state's bonus is in before the producers start: the
        // feedback's later bonuses may all come after the stop (and be
        // refused) when a busy pool runs the loop only once they are done.
        #expect(await eventually { loop.state.bonuses == 1 })
        let perProducer = 5_000
        await onThreads(4) { producer in
            for sequence in 0..<perProducer { loop.emit(.item(producer: producer, sequence: sequence)) }
        }
        let report = await loop.stop()
        await collector.value
        try await recorder.waitUntilWritten()

        let recording = try SpinRecording<LedgerEvent>(contentsOf: url)
        #expect(recording.version == 1)
        #expect(recording.stopReport == report)
        #expect(recording.entries.count == report.reduced)
        #expect(recording.entries.count >= 4 * perProducer)
        let replayed = recording.replay(spin)
        #expect(replayed.first == Ledger())
        #expect(replayed.last == loop.state)
        #expect(replayed.last?.bonuses ?? 0 > 0)
        // Every state the loop published is a replayed state, in order.
        let observed = seen.withLock { $0 }
        var cursor = replayed.startIndex
        for state in observed {
            guard let found = replayed[cursor...].firstIndex(of: state) else {
                Issue.record("state \(state.count) was not replayed in order")
                break
            }
            cursor = found
        }
        // Times never go backwards.
        let times = recording.entries.map(\.time)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 })
        // The recorded initial state decodes.
        #expect(try recording.initialState(as: Ledger.self) == Ledger())
    }

    @Test("the format: a header, a line per reduction, a footer")
    func format() async throws {
        let sink = MemorySink()
        let recorder = SpinRecorder<Ledger, LedgerEvent>(writer: { sink.write($0) })
        let spin = Spin<Ledger, LedgerEvent>(initialState: Ledger(), feedbacks: [], reducer: ledgerReducer)
        let loop = try spin.observed(by: recorder).start()
        loop.emit(.bonus(7))
        await loop.stop()
        try await recorder.waitUntilWritten()
        let lines = String(decoding: sink.contents, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix(#"{"format":"spindle-recording","initial_state":{"#))
        #expect(lines[0].hasSuffix(#""version":1}"#))
        #expect(lines[1].hasPrefix(#"{"event":{"bonus":{"_0":7}},"reduction":1,"time_ns":"#))
        #expect(lines[2] == #"{"stopped":{"discarded":0,"reduced":1}}"#)
    }

    @Test("bad recordings get clear errors")
    func badRecordings() throws {
        func read(_ text: String) throws -> SpinRecording<LedgerEvent> {
            try SpinRecording<LedgerEvent>(jsonLines: Data(text.utf8))
        }
        let header = #"{"format":"spindle-recording","version":1,"initial_state":null}"#
        let line1 = #"{"reduction":1,"time_ns":5,"event":{"bonus":{"_0":1}}}"#
        let line3 = #"{"reduction":3,"time_ns":9,"event":{"bonus":{"_0":1}}}"#
        #expect(throws: RecordingError.notARecording(firstLine: "hello")) { try read("hello\n") }
        #expect(throws: RecordingError.unsupportedVersion(2)) {
            try read(#"{"format":"spindle-recording","version":2}"# + "\n")
        }
        #expect(throws: RecordingError.reductionOutOfSequence(line: 3, expected: 2, found: 3)) {
            try read([header, line1, line3].joined(separator: "\n"))
        }
        #expect(throws: RecordingError.lineAfterFooter(line: 3)) {
            try read([header, #"{"stopped":{"reduced":0,"discarded":0}}"#, line1].joined(separator: "\n"))
        }
        do {
            _ = try read([header, #"{"reduction":1,"time_ns":5,"event":{"nope":1}}"#].joined(separator: "\n"))
            Issue.record("an undecodable event was accepted")
        } catch let error as RecordingError {
            guard case .malformedLine(line: 2, _) = error else {
                Issue.record("wrong error: \(error)")
                return
            }
        }
        // No initial state: replay needs one; a cut-short recording replays.
        let cut = try read([header, line1].joined(separator: "\n"))
        #expect(cut.stopReport == nil)
        #expect(throws: RecordingError.noInitialState) { try cut.initialState(as: Ledger.self) }
        #expect(cut.replay(through: ledgerReducer, from: Ledger()).last?.bonuses == 1)
    }

    /// Headers whose `initial_state` is JSON but not a `Ledger` (the fuzzer's
    /// findings, Fuzz/Regressions), and JSON that Foundation's parser takes
    /// but no `Ledger` holds: each is line 1's RecordingError, never the
    /// decoder's own error and never "no initial state".
    @Test("an initial state that is not a State is a RecordingError naming line 1", arguments: [
        #"{"digest":1,"count":0,"lastSequence":[],"bonusez":0}"#,
        #""a ledger""#,
        #"{"digest":18446744073709551616,"count":0,"lastSequence":[],"bonuses":0}"#,
        #"{"digest":1e400,"count":0,"lastSequence":[],"bonuses":0}"#,
        #"{"digest":1,"count":0,"lastSequence":["\ud800"],"bonuses":0}"#,
        #"[1, 2]"#,
    ])
    func initialStateThatIsNotAState(_ state: String) throws {
        let text = #"{"format":"spindle-recording","version":1,"initial_state":"# + state + "}\n"
        let recording = try SpinRecording<LedgerEvent>(jsonLines: Data(text.utf8))
        do {
            _ = try recording.initialState(as: Ledger.self)
            Issue.record("\(state) decoded as a Ledger")
        } catch let error as RecordingError {
            guard case .malformedLine(line: 1, let reason) = error else {
                Issue.record("wrong error: \(error)")
                return
            }
            #expect(reason.contains("Ledger"))
        }
    }

    @Test("a recorder attached to a second loop reports it")
    func reusedRecorder() async throws {
        let recorder = SpinRecorder<Ledger, LedgerEvent>(writer: { _ in })
        let spin = Spin<Ledger, LedgerEvent>(initialState: Ledger(), feedbacks: [], reducer: ledgerReducer)
            .observed(by: recorder)
        try await spin.start().stop()
        try await spin.start().stop()
        await #expect(throws: RecordingError.recorderReused) { try await recorder.waitUntilWritten() }
    }
}
