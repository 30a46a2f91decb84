#if !canImport(Combine) && !SpindleCombine
#error("SpindleCombine needs OpenCombine where Combine is missing, which this package uses only with its trait SpindleCombine on: add it to the package's traits (.package(url: …, traits: [\"SpindleCombine\"]))")
#endif
// `import SpindleCombine` brings the Combine names that its own API is made
// of — `Publisher`, `AnyPublisher`, `AnyCancellable`, `ObservableObject`,
// `Published` — from Apple's Combine where it exists, OpenCombine elsewhere,
// so code written against SpindleCombine's API builds on both with no import
// of its own. Nothing else of Combine is re-exported: code that uses more
// (`Just`, subjects, operators' types) imports Combine or OpenCombine itself.
#if canImport(Combine)
@_exported import protocol Combine.Publisher
@_exported import struct Combine.AnyPublisher
@_exported import class Combine.AnyCancellable
@_exported import protocol Combine.ObservableObject
@_exported import struct Combine.Published
#else
@_exported import protocol OpenCombine.Publisher
@_exported import struct OpenCombine.AnyPublisher
@_exported import class OpenCombine.AnyCancellable
@_exported import protocol OpenCombine.ObservableObject
@_exported import struct OpenCombine.Published
#endif
