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
/// ```swift
/// let recording = try SpinRecording<Levels.Event>(contentsOf: url)
/// let states = try recording.replay(spin)       // initial state first
/// let states = recording.replay(through: reducer, from: initial)
/// ```
///
/// The format (version 1) is described on ``SpinRecorder`` and in the
/// README: a header line with the initial state, a line per reduction, a
/// footer with the stop report.
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
    /// The header's `initial_state`, as JSON (nil when it was null).
    private let initialStateJSON: Data?

    /// Reads a recording from a file.
    /// - Throws: ``RecordingError`` for a file that is not a recording, of
    ///   an unknown version, or with a line that cannot be decoded; the
    ///   file system's error when it cannot be read.
    public init(contentsOf url: URL) throws {
        try self.init(jsonLines: try Data(contentsOf: url))
    }

    /// Reads a recording from its JSON Lines.
    /// - Throws: ``RecordingError``, naming the line at fault.
    public init(jsonLines data: Data) throws {
        let decoder = JSONDecoder()
        var lines = data.split(separator: 0x0A, omittingEmptySubsequences: true).makeIterator()
        guard let first = lines.next() else { throw RecordingError.notARecording(firstLine: "") }
        guard let prefix = try? decoder.decode(RecordingFormat.HeaderPrefix.self, from: Data(first)),
              prefix.format == RecordingFormat.name else {
            throw RecordingError.notARecording(firstLine: String(decoding: first, as: UTF8.self))
        }
        guard prefix.version == RecordingFormat.version else {
            throw RecordingError.unsupportedVersion(prefix.version)
        }
        version = prefix.version
        initialStateJSON = Self.initialStateJSON(in: Data(first))

        var entries: [Entry] = []
        var stopReport: StopReport?
        var lineNumber = 1
        while let line = lines.next() {
            lineNumber += 1
            let data = Data(line)
            if stopReport != nil { throw RecordingError.lineAfterFooter(line: lineNumber) }
            let kind: RecordingFormat.LineKind
            do {
                kind = try decoder.decode(RecordingFormat.LineKind.self, from: data)
            } catch {
                throw RecordingError.malformedLine(line: lineNumber, reason: String(describing: error))
            }
            if let stopped = kind.stopped {
                stopReport = StopReport(reduced: stopped.reduced, discarded: stopped.discarded)
                continue
            }
            let entry: RecordingFormat.Reduction<Event>
            do {
                entry = try decoder.decode(RecordingFormat.Reduction<Event>.self, from: data)
            } catch {
                throw RecordingError.malformedLine(line: lineNumber, reason: String(describing: error))
            }
            guard entry.reduction == entries.count + 1 else {
                throw RecordingError.reductionOutOfSequence(
                    line: lineNumber, expected: entries.count + 1, found: entry.reduction)
            }
            entries.append(Entry(
                reduction: entry.reduction, time: .nanoseconds(entry.timeNanoseconds), event: entry.event))
        }
        self.entries = entries
        self.stopReport = stopReport
    }

    /// The events, in reduction order.
    public var events: [Event] { entries.map(\.event) }

    /// The recorded initial state, decoded as `State`.
    /// - Throws: ``RecordingError/noInitialState`` when the recording has
    ///   none, or the decoder's error when it is not a `State`.
    public func initialState<State: Decodable>(as type: State.Type = State.self) throws -> State {
        guard let json = initialStateJSON else { throw RecordingError.noInitialState }
        return try JSONDecoder().decode(State.self, from: json)
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

    // The header's initial_state value, re-encoded on its own (nil for null).
    private static func initialStateJSON(in header: Data) -> Data? {
        guard let object = try? JSONSerialization.jsonObject(with: header) as? [String: Any],
              let value = object["initial_state"], !(value is NSNull) else { return nil }
        return try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed])
    }
}
