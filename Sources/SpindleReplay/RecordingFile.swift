#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The system calls a ``RecordingFile`` makes. Tests replace them to inject
/// `EINTR`, short writes and failures, and to count syncs.
///
/// Each returns what the system call returns and, on failure, leaves the
/// code in `errno`, as the system call does.
package struct RecordingFileCalls: Sendable {
    package var write: @Sendable (Int32, UnsafeRawPointer, Int) -> Int
    package var fsync: @Sendable (Int32) -> Int32
    package var ftruncate: @Sendable (Int32, Int) -> Int32
    package var close: @Sendable (Int32) -> Int32

    package init(
        write: @escaping @Sendable (Int32, UnsafeRawPointer, Int) -> Int,
        fsync: @escaping @Sendable (Int32) -> Int32,
        ftruncate: @escaping @Sendable (Int32, Int) -> Int32,
        close: @escaping @Sendable (Int32) -> Int32
    ) {
        self.write = write
        self.fsync = fsync
        self.ftruncate = ftruncate
        self.close = close
    }

    package static let system = RecordingFileCalls(
        write: { fd, bytes, count in
            #if canImport(Darwin)
            Darwin.write(fd, bytes, count)
            #else
            Glibc.write(fd, bytes, count)
            #endif
        },
        fsync: { fd in
            #if canImport(Darwin)
            Darwin.fsync(fd)
            #else
            Glibc.fsync(fd)
            #endif
        },
        ftruncate: { fd, length in
            #if canImport(Darwin)
            Darwin.ftruncate(fd, off_t(length))
            #else
            Glibc.ftruncate(fd, off_t(length))
            #endif
        },
        close: { fd in
            #if canImport(Darwin)
            Darwin.close(fd)
            #else
            Glibc.close(fd)
            #endif
        }
    )
}

/// A recording's file, written through its descriptor with POSIX calls so
/// that every failure (`ENOSPC`, `EFBIG`, `EIO`) is seen with its `errno`
/// and with how many bytes made it before it.
///
/// Thread safety: none; its recorder's writer queue only.
final class RecordingFile {
    /// A call that failed, after `bytesWritten` bytes of the chunk at hand.
    struct Failure: Error {
        let call: String
        let errno: Int32
        let bytesWritten: Int
    }

    // writer queue only
    private var descriptor: Int32?
    private let calls: RecordingFileCalls

    /// Creates or truncates `path`, for writing.
    /// - Throws: ``RecordingError/writeFailed(reason:)`` naming the error.
    init(path: String, calls: RecordingFileCalls = .system) throws(RecordingError) {
        var fd: Int32
        repeat {
            fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        } while fd < 0 && errno == EINTR
        guard fd >= 0 else {
            let code = errno
            throw .writeFailed(reason: "cannot open \(path) for writing: \(String(cString: strerror(code))) (errno \(code))")
        }
        descriptor = fd
        self.calls = calls
    }

    deinit {
        // A recorder whose loop never stopped: release the descriptor.
        if let descriptor { _ = calls.close(descriptor) }
    }

    /// Writes all of `data`, retrying after `EINTR` and short writes.
    /// - Throws: the failing call, with the bytes of `data` written before it.
    func write(_ data: Data) throws(Failure) {
        guard let fd = descriptor else { throw Failure(call: "write", errno: EBADF, bytesWritten: 0) }
        let outcome: Failure? = data.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return nil }
            var done = 0
            while done < buffer.count {
                let result = calls.write(fd, base + done, buffer.count - done)
                if result < 0 {
                    let code = errno
                    if code == EINTR { continue }
                    return Failure(call: "write", errno: code, bytesWritten: done)
                }
                // A zero-byte write of a non-empty range makes no progress:
                // report it rather than spin.
                if result == 0 { return Failure(call: "write", errno: EIO, bytesWritten: done) }
                done += result
            }
            return nil
        }
        if let outcome { throw outcome }
    }

    /// Asks the storage to keep what was written (`fsync(2)`).
    func sync() throws(Failure) {
        guard let fd = descriptor else { throw Failure(call: "fsync", errno: EBADF, bytesWritten: 0) }
        while calls.fsync(fd) != 0 {
            let code = errno
            if code != EINTR { throw Failure(call: "fsync", errno: code, bytesWritten: 0) }
        }
    }

    /// Cuts the file to `length` bytes, best effort: after a failed write,
    /// so the file ends on a complete line when the system allows it.
    func truncate(to length: Int) {
        guard let fd = descriptor else { return }
        while calls.ftruncate(fd, length) != 0 && errno == EINTR {}
    }

    /// Closes the descriptor. Not retried after `EINTR`: on Linux the
    /// descriptor is released whatever `close` returns.
    func close() throws(Failure) {
        guard let fd = descriptor else { return }
        descriptor = nil
        if calls.close(fd) != 0 {
            let code = errno
            if code != EINTR { throw Failure(call: "close", errno: code, bytesWritten: 0) }
        }
    }
}
