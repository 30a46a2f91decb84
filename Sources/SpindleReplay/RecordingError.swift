#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a recording could not be written or read.
public enum RecordingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The first line is not a Spindle recording header.
    case notARecording(firstLine: String)
    /// The header names a format version this reader does not know.
    case unsupportedVersion(Int)
    /// A line could not be decoded (`line` counts from 1).
    case malformedLine(line: Int, reason: String)
    /// The last line has no line feed and does not decode: the recording
    /// was cut in the middle of writing it (a process killed mid-write, a
    /// full disk). Every line before `line` is complete. Read with
    /// ``TornLastLine/drop`` to keep them.
    case tornLastLine(line: Int)
    /// Reductions must count 1, 2, 3…: a gap or a repeat means lines are
    /// missing or out of place.
    case reductionOutOfSequence(line: Int, expected: Int, found: Int)
    /// A line follows the footer.
    case lineAfterFooter(line: Int)
    /// The recording has no initial state (its state was not `Encodable`):
    /// pass one to the replay.
    case noInitialState
    /// The recorder was attached to a second loop; one recorder records one
    /// loop run (create one per `start`).
    case recorderReused
    /// Encoding failed, the file could not be opened, or a writer closure
    /// threw.
    case writeFailed(reason: String)
    /// A system call on the recording's file failed with `errno`
    /// (`ENOSPC`, `EFBIG`, `EIO`…), and the recording stopped. The file
    /// holds every reduction up to `lastWrittenReduction` as complete
    /// lines, and nothing after (0: the header only, or nothing).
    case fileCallFailed(call: String, errno: Int32, lastWrittenReduction: Int)
    /// Under ``RecorderOptions/Backlog/stopRecording``, more than
    /// `backlogLimit` reductions waited for the writer, and the recording
    /// stopped (the loop kept running). The recording holds every reduction
    /// up to `lastWrittenReduction`, and nothing after.
    case writerFellBehind(backlogLimit: Int, lastWrittenReduction: Int)
    /// The ``RecorderOptions`` cannot record (`reason` says which value):
    /// ``SpinRecorder/init(file:options:)`` throws it before touching the
    /// file; a recorder made with a writer records nothing and reports it.
    case invalidOptions(reason: String)

    /// The last reduction in the stopped recording, for the errors that stop
    /// a recording mid-run; nil for the others.
    public var lastWrittenReduction: Int? {
        switch self {
        case .fileCallFailed(_, _, let reduction), .writerFellBehind(_, let reduction): return reduction
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .notARecording(let line):
            return "not a Spindle recording: the first line is \(line.prefix(120))"
        case .unsupportedVersion(let version):
            return "Spindle recording version \(version) is not supported (this reader knows version \(RecordingFormat.version))"
        case .malformedLine(let line, let reason):
            return "line \(line) of the recording cannot be read: \(reason)"
        case .tornLastLine(let line):
            return "the recording was cut short in the middle of line \(line); the lines before it are complete"
        case .reductionOutOfSequence(let line, let expected, let found):
            return "line \(line) holds reduction \(found) where \(expected) was expected: lines are missing or out of place"
        case .lineAfterFooter(let line):
            return "line \(line) follows the recording's footer"
        case .noInitialState:
            return "the recording has no initial state (the state type is not Encodable): pass one to replay"
        case .recorderReused:
            return "a SpinRecorder records one loop run; it was attached to a second loop"
        case .writeFailed(let reason):
            return "the recording could not be written: \(reason)"
        case .fileCallFailed(let call, let code, let reduction):
            return "the recording stopped after reduction \(reduction): \(call) failed: \(String(cString: strerror(code))) (errno \(code))"
        case .writerFellBehind(let limit, let reduction):
            return "the recording stopped after reduction \(reduction): more than \(limit) reductions waited for the writer"
        case .invalidOptions(let reason):
            return "the recorder's options cannot record: \(reason)"
        }
    }
}
