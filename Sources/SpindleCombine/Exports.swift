// `import SpindleCombine` brings the Combine vocabulary with it (`Just`,
// `AnyPublisher`, `sink`…): Apple's Combine where it exists, OpenCombine
// elsewhere. A user's target then needs no OpenCombine dependency of its own,
// and the same code builds on both.
#if canImport(Combine)
@_exported import Combine
#else
@_exported import OpenCombine
#endif
