import Foundation
import Spindle
import SpindleReplay

/// libFuzzer's entry point: reads `bytes` as a recording, all the way through.
///
/// Every input must end in a value or a `RecordingError`. Anything else — a
/// trap, another error type, a broken guarantee of the reader — stops the
/// process, which libFuzzer records as a crash with its input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecordingReader(_ bytes: UnsafeRawPointer?, _ count: Int) -> CInt {
    let data = if let bytes, count > 0 { Data(bytes: bytes, count: count) } else { Data() }
    do {
        try readRecording(data)
    } catch is RecordingError {
        // A clear answer to bad input: what the reader promises.
    } catch {
        fatalError("the reader threw \(type(of: error)), not a RecordingError: \(error)")
    }
    return 0
}

/// `--write-seed-corpus DIR` writes the seed recordings to DIR and exits,
/// before libFuzzer reads its own flags; otherwise libFuzzer runs as usual.
@_cdecl("LLVMFuzzerInitialize")
public func initializeRecordingFuzzer(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> CInt {
    if writeSeedCorpusIfAsked(Array(UnsafeBufferPointer(start: argv.pointee, count: Int(argc.pointee)))) {
        // Only here, once every value of the seed run is released: the leak
        // checker looks at what is still allocated at exit.
        exit(0)
    }
    return 0
}

private func writeSeedCorpusIfAsked(_ argv: [UnsafeMutablePointer<CChar>?]) -> Bool {
    let arguments = argv.compactMap { $0.map { String(cString: $0) } }
    guard let flag = arguments.firstIndex(of: "--write-seed-corpus") else { return false }
    guard flag + 1 < arguments.count else { fatalError("--write-seed-corpus needs a directory") }
    writeSeedCorpus(to: URL(fileURLWithPath: arguments[flag + 1], isDirectory: true))
    return true
}

/// The whole read path a user's code takes: parse, then replay — from a
/// state the caller supplies (a state that is not Codable), and from the
/// header's initial state (a Codable one).
private func readRecording(_ data: Data) throws {
    let recording = try SpinRecording<CartEvent>(jsonLines: data)
    for (index, entry) in recording.entries.enumerated() {
        precondition(entry.reduction == index + 1, "the reader let through reduction \(entry.reduction) at \(index + 1)")
    }

    let summaries = recording.replay(through: summaryReducer, from: CartSummary())
    precondition(summaries.count == recording.entries.count + 1, "replay skipped or invented states")

    let cart = try recording.initialState(as: Cart.self)
    let carts = recording.replay(Spin(initialState: cart, feedbacks: [], reducer: cartReducer))
    precondition(carts.first == cart, "replay did not start from the initial state")
}
