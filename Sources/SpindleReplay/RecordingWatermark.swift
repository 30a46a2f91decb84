/// How far a recording has reached the file system and storage.
///
/// **Thread safety:** a value; share it freely.
public struct RecordingWatermark: Sendable, Hashable, CustomStringConvertible {
    /// The last reduction whose line has been written (`write(2)` returned
    /// for all of it); 0 when only the header has.
    public let written: Int
    /// The last reduction whose line `fsync(2)` has made durable; nil when
    /// nothing has been synced yet.
    public let synced: Int?

    /// Creates a watermark (for comparisons in tests).
    public init(written: Int, synced: Int?) {
        self.written = written
        self.synced = synced
    }

    public var description: String {
        "written through reduction \(written), synced through \(synced.map(String.init) ?? "none")"
    }
}
