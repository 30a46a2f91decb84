/// Why a store could not do what it was asked.
public enum AtomError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An atom watches itself through the atoms listed: the path begins and
    /// ends with the same atom. The watch that would close the cycle is
    /// refused; the atoms on the path keep the values they had.
    case cycle(path: [String])
    /// The store was closed (``AtomStore/close()``): it keeps no atom and
    /// accepts no operation.
    case storeClosed

    public var description: String {
        switch self {
        case .cycle(let path): "SpindleAtoms: dependency cycle: \(path.joined(separator: " → "))"
        case .storeClosed: "SpindleAtoms: the store is closed"
        }
    }
}
