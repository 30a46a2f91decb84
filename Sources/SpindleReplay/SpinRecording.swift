import Foundation
import Spindle

/// A recorded loop run, read back from the JSON Lines a ``SpinRecorder``
/// wrote, and replayed through a reducer.
///
/// The reducer is pure and the recording holds every reduced event in
/// reduction order, so replaying it from the same initial state gives every
/// state the loop went through, in order — whatever threads emitted those
/// events and however they interleaved. That is time-travel debugging: load
/// a recording from a failed run and step through its states.
///
/// @Snippet(path: "Spindle/Snippets/SpindleReplay/ReplayRecordToFile", slice: "replay")
///
/// The format (version 1) is described in <doc:RecordAndReplay>: a header
/// line with the initial state, a line per reduction, a footer with the
/// stop report.
///
/// A recording that was cut short (a crash, a full disk) has no footer and
/// may end in a torn line: read it with ``TornLastLine/drop`` to replay its
/// complete lines, the states published up to its last flush.
///
/// **Thread safety:** a value; share it freely.
public struct SpinRecording<Event: Decodable & Sendable>: Sendable {
    /// One reduced event.
    public struct Entry: Sendable {
        /// Its place in reduction order, from 1.
        public let reduction: Int
        /// When it was reduced, since the loop started (monotonic clock).
        public let time: Duration
        /// The event.
        public let event: Event
    }

    /// The format version of the file.
    public let version: Int
    /// The reduced events, in reduction order.
    public let entries: [Entry]
    /// The loop's stop report, or nil when the recording was cut short.
    public let stopReport: StopReport?
    /// The torn last line a ``TornLastLine/drop`` read left out, as
    /// ``RecordingError/tornLastLine(line:)``; nil when the recording had
    /// none.
    public let tornTail: RecordingError?
    /// The header line, whose `initial_state` ``initialState(as:)`` decodes.
    private let header: Data

    /// Reads a recording from a file.
    /// - Parameters:
    ///   - url: the file.
    ///   - tornLastLine: what to do with a last line cut short (default
    ///     ``TornLastLine/fail``).
    /// - Throws: ``RecordingError`` for a file that is not a recording, of
    ///   an unknown version, or with a line that cannot be decoded (a torn
    ///   last line: ``RecordingError/tornLastLine(line:)``, unless dropped);
    ///   the file system's error when it cannot be read.
    public init(contentsOf url: URL, tornLastLine: TornLastLine = .fail) throws {
        try self.init(jsonLines: try Data(contentsOf: url), tornLastLine: tornLastLine)
    }

    /// Reads a recording from its JSON Lines.
    ///
    /// A recording cut at any byte (a process killed mid-write, a full
    /// disk) reads as its complete lines plus ``RecordingError/tornLastLine(line:)``
    /// for the last one, when that line has no line feed and does not
    /// decode. A last line without a line feed that decodes in full is
    /// complete and kept.
    ///
    /// - Parameters:
    ///   - data: the recording's bytes.
    ///   - tornLastLine: ``TornLastLine/fail`` (the default) throws for a
    ///     torn last line; ``TornLastLine/drop`` keeps the lines before it
    ///     and reports it in ``tornTail``.
    /// - Throws: ``RecordingError``, naming the line at fault. A recording
    ///   torn inside its header throws even with ``TornLastLine/drop``: it
    ///   has no complete line to keep.
    public init(jsonLines data: Data, tornLastLine: TornLastLine = .fail) throws {
        let decoder = JSONDecoder()
        var lines = data.split(separator: 0x0A, omittingEmptySubsequences: false)
        // The segment after the last line feed: empty for a whole recording,
        // the torn line's bytes for a cut one.
        let tail = lines.removeLast()
        let tailLineNumber = lines.count + 1
        let tailIsLine = !tail.isEmpty
        var tornTail: RecordingError?
        var parsed = Parsed()
        do {
            try Self.parse(lines, tail: tailIsLine ? tail : nil, decoder: decoder, into: &parsed)
        } catch let error as RecordingError {
            // A torn line: the error is in the unterminated tail, and the
            // tail is not JSON at all (no proper prefix of a JSON object is
            // JSON). A whole JSON line that is wrong keeps its own error.
            guard tailIsLine, Self.line(of: error) == tailLineNumber,
                  (try? JSONSerialization.jsonObject(with: Data(tail), options: [.fragmentsAllowed])) == nil else {
                throw error
            }
            guard tornLastLine == .drop, tailLineNumber > 1 else {
                throw RecordingError.tornLastLine(line: tailLineNumber)
            }
            // `parse` failed on the last line, so `parsed` holds every line
            // before it, read in full: the recovery read is already done.
            tornTail = .tornLastLine(line: tailLineNumber)
        }
        version = parsed.version
        header = parsed.header
        entries = parsed.entries
        stopReport = parsed.stopReport
        self.tornTail = tornTail
    }

    /// What the lines held, as far as they were read.
    private struct Parsed {
        var version = 0
        var header = Data()
        var entries: [Entry] = []
        var stopReport: StopReport?
    }

    /// The line an error names, for the errors that name one.
    private static func line(of error: RecordingError) -> Int? {
        switch error {
        case .notARecording: return 1
        case .malformedLine(let line, _): return line
        // A line after the footer, a reduction out of sequence or an unknown
        // version: the line was read whole.
        default: return nil
        }
    }

    /// Reads `lines`, then `tail`, into `parsed`, line by line. When it
    /// throws, `parsed` holds every line before the one at fault.
    private static func parse(
        _ lines: [Data.SubSequence], tail: Data.SubSequence?, decoder: JSONDecoder, into parsed: inout Parsed
    ) throws {
        var lines = (lines + (tail.map { [$0] } ?? [])).makeIterator()
        guard let first = lines.next(), !first.isEmpty else { throw RecordingError.notARecording(firstLine: "") }
        guard let prefix = try? decoder.decode(RecordingFormat.HeaderPrefix.self, from: Data(first)),
              prefix.format == RecordingFormat.name else {
            throw RecordingError.notARecording(firstLine: String(decoding: first, as: UTF8.self))
        }
        guard prefix.version == RecordingFormat.version else {
            throw RecordingError.unsupportedVersion(prefix.version)
        }
        parsed.version = prefix.version
        parsed.header = Data(first)

        var lineNumber = 1
        while let line = lines.next() {
            lineNumber += 1
            // Blank lines are skipped, as they always were.
            if line.isEmpty { continue }
            let data = Data(line)
            if parsed.stopReport != nil { throw RecordingError.lineAfterFooter(line: lineNumber) }
            let kind: RecordingFormat.LineKind
            do {
                kind = try decoder.decode(RecordingFormat.LineKind.self, from: data)
            } catch {
                throw RecordingError.malformedLine(line: lineNumber, reason: String(describing: error))
            }
            if let stopped = kind.stopped {
                parsed.stopReport = StopReport(reduced: stopped.reduced, discarded: stopped.discarded)
                continue
            }
            let entry: RecordingFormat.Reduction<Event>
            do {
                entry = try decoder.decode(RecordingFormat.Reduction<Event>.self, from: data)
            } catch {
                throw RecordingError.malformedLine(line: lineNumber, reason: String(describing: error))
            }
            guard entry.reduction == parsed.entries.count + 1 else {
                throw RecordingError.reductionOutOfSequence(
                    line: lineNumber, expected: parsed.entries.count + 1, found: entry.reduction)
            }
            parsed.entries.append(Entry(
                reduction: entry.reduction, time: .nanoseconds(entry.timeNanoseconds), event: entry.event))
        }
    }

    /// The events, in reduction order.
    public var events: [Event] { entries.map(\.event) }

    /// The recorded initial state, decoded as `State`.
    /// - Throws: ``RecordingError/noInitialState`` when the recording has
    ///   none (it was `null`: the state was not `Encodable`), or
    ///   ``RecordingError/malformedLine(line:reason:)`` for line 1 when it
    ///   is not a `State`.
    public func initialState<State: Decodable>(as type: State.Type = State.self) throws -> State {
        let decoded: RecordingFormat.InitialState<State>
        do {
            decoded = try JSONDecoder().decode(RecordingFormat.InitialState<State>.self, from: header)
        } catch {
            throw RecordingError.malformedLine(line: 1, reason: "the initial state is not a \(State.self): \(error)")
        }
        guard let state = decoded.initialState else { throw RecordingError.noInitialState }
        return state
    }

    /// Replays the events through `reducer` from `initialState`.
    /// - Returns: every state: `initialState` first, then the state after
    ///   each entry (so `entries.count + 1` states).
    /// - Complexity: O(n) reductions.
    public func replay<State>(through reducer: Reducer<State, Event>, from initialState: State) -> [State] {
        var states = [initialState]
        states.reserveCapacity(entries.count + 1)
        var state = initialState
        for entry in entries {
            state = reducer.reduce(state, entry.event)
            states.append(state)
        }
        return states
    }

    /// Replays the events through `spin`'s reducer, from `spin`'s initial
    /// state. Feedbacks do not run: their events are in the recording.
    /// - Returns: every state, the initial state first.
    public func replay<State>(_ spin: Spin<State, Event>) -> [State] {
        replay(through: spin.reducer, from: spin.initialState)
    }
}

/// What reading a recording does with a last line cut short.
public enum TornLastLine: Sendable, Hashable {
    /// Throw ``RecordingError/tornLastLine(line:)``: a strict read, for a
    /// recording that should be whole.
    case fail
    /// Keep every complete line before it, and report it in
    /// ``SpinRecording/tornTail``: the recovery read of a journal whose
    /// writer was killed.
    case drop
}
