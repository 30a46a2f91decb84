/// Where an asynchronous value stands: still coming, arrived, or failed.
public enum AsyncPhase<Success: Sendable, Failure: Error>: Sendable {
    /// Not there yet.
    case suspending
    /// The value.
    case success(Success)
    /// The error the work ended with.
    case failure(Failure)

    /// Whether the value is still coming.
    public var isSuspending: Bool {
        if case .suspending = self { return true }
        return false
    }

    /// The value, once there.
    public var value: Success? {
        if case .success(let value) = self { return value }
        return nil
    }

    /// The error, if the work failed.
    public var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }

    /// The phase of a finished task's result.
    public init(_ result: Result<Success, Failure>) {
        switch result {
        case .success(let value): self = .success(value)
        case .failure(let error): self = .failure(error)
        }
    }
}

extension AsyncPhase: Equatable where Success: Equatable, Failure: Equatable {}
extension AsyncPhase: Hashable where Success: Hashable, Failure: Hashable {}
