/// The atoms scenarios' engines that need a module the build may lack:
/// `combine` needs OpenCombine (the `SpindleCombine` trait) where the
/// system has no Combine.
enum AtomsEngines {
    #if canImport(Combine) || canImport(OpenCombine)
    static let hasCombine = true
    #else
    static let hasCombine = false
    #endif

    /// `engines` without those this build cannot run.
    static func available(_ engines: [Engine]) -> [Engine] {
        hasCombine ? engines : engines.filter { $0 != .combine }
    }

    /// `combine` when this build has it, else no yardstick.
    static var combineYardstick: Engine? { hasCombine ? .combine : nil }

    static let noCombine = "this build has neither Combine nor OpenCombine (the SpindleCombine trait)"
}
