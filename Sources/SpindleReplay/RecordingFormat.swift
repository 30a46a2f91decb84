/// The lines of a Spindle recording: JSON Lines, one JSON object per line,
/// UTF-8, `\n`-terminated.
///
/// Version 1:
///
/// ```
/// {"format":"spindle-recording","version":1,"initial_state":{…}}
/// {"reduction":1,"time_ns":5120,"event":{…}}
/// {"reduction":2,"time_ns":5391,"event":{…}}
/// …
/// {"stopped":{"reduced":2,"discarded":0}}
/// ```
///
/// - The **header** comes first. `initial_state` is the loop's initial state
///   encoded with `JSONEncoder`, or `null` when the state is not `Encodable`.
/// - Each **reduction** line holds one reduced event (`Encodable`, encoded
///   with `JSONEncoder`), in reduction order. `reduction` counts from 1 with
///   no gap; `time_ns` is the time of the reduction in nanoseconds since the
///   loop started, on the monotonic clock.
/// - The **footer** is written when the loop stops, with its stop report.
///   A recording without one was cut short (a crash, or a recorder whose
///   loop is still running); it can still be replayed up to its last line.
///
/// A reader rejects a `format` other than `spindle-recording` and a
/// `version` it does not know; later versions may add keys, which version-1
/// readers ignore.
enum RecordingFormat {
    static let name = "spindle-recording"
    static let version = 1

    struct Header<State: Encodable>: Encodable {
        let format: String
        let version: Int
        let initialState: State?

        enum CodingKeys: String, CodingKey {
            case format, version
            case initialState = "initial_state"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(format, forKey: .format)
            try container.encode(version, forKey: .version)
            // Written as null rather than left out: the key is in every header.
            try container.encode(initialState, forKey: .initialState)
        }
    }

    /// The header's initial state alone, decoded straight from the header
    /// line (nil when it is `null`).
    struct InitialState<State: Decodable>: Decodable {
        let initialState: State?

        enum CodingKeys: String, CodingKey {
            case initialState = "initial_state"
        }
    }

    struct HeaderPrefix: Decodable {
        let format: String
        let version: Int
    }

    struct Reduction<Event> {
        let reduction: Int
        let timeNanoseconds: Int64
        let event: Event

        enum CodingKeys: String, CodingKey {
            case reduction, event
            case timeNanoseconds = "time_ns"
        }
    }

    struct Footer: Codable {
        struct Stopped: Codable {
            let reduced: Int
            let discarded: Int
        }
        let stopped: Stopped
    }

    /// Tells the line kinds apart without decoding the event.
    struct LineKind: Decodable {
        let format: String?
        let reduction: Int?
        let stopped: Footer.Stopped?
    }
}

extension RecordingFormat.Reduction: Sendable where Event: Sendable {}
extension RecordingFormat.Reduction: Encodable where Event: Encodable {}
extension RecordingFormat.Reduction: Decodable where Event: Decodable {}
