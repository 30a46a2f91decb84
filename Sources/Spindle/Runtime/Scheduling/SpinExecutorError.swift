/// Why a loop could not start, or a pool could not be made or shut down.
///
/// Starting a loop never kills the process: ``Spin/start(options:)``
/// throws one of these; a bridge that starts a loop for you and cannot
/// throw (``UISpin``, ``ObservationSpin``) returns a loop that is already
/// stopped, with the error in ``SpinLoop/startError``.
public enum SpinExecutorError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The operating system refused a new thread (`pthread_create` failed
    /// with `errno`; `EAGAIN` when a thread or memory-map limit is reached).
    case threadUnavailable(errno: Int32)
    /// The pool named `pool` was shut down; it takes no new loops.
    case poolShutDown(pool: String)
    /// ``ReducerPool/shared`` lives as long as the process: it cannot be shut down.
    case sharedPoolCannotShutDown
    /// A pool needs at least one thread.
    case invalidThreadCount(Int)
    /// The loop's ``SpinOptions`` cannot run: `reason` says which value
    /// (``SpinOptions/maxBatch`` below 1, a bounded queue's capacity outside
    /// 1…2^30).
    case invalidOptions(reason: String)
    /// A per-start feedback (``Feedback/withEnvironment(_:_:)``) needs an
    /// environment of type `expected`, and the start gave none (`given`
    /// nil: ``Spin/start(options:)``) or one of type `given`. Start the spin
    /// with ``Spin/start(environment:options:)``.
    case missingEnvironment(expected: String, given: String?)

    public var description: String {
        switch self {
        case .threadUnavailable(let errno):
            "Spindle: the system refused a new thread (pthread_create error \(errno)); "
                + "use the shared pool (the default) for many loops, not a dedicated thread each"
        case .poolShutDown(let pool):
            "Spindle: the reducer pool '\(pool)' is shut down and takes no new loops"
        case .sharedPoolCannotShutDown:
            "Spindle: the shared reducer pool lives as long as the process and cannot be shut down"
        case .invalidThreadCount(let count):
            "Spindle: a reducer pool needs at least one thread (asked for \(count))"
        case .invalidOptions(let reason):
            "Spindle: the loop's options cannot run: \(reason)"
        case .missingEnvironment(let expected, let given):
            "Spindle: a feedback of this spin is made per start from an environment of type \(expected), "
                + (given.map { "and the start gave one of type \($0)" } ?? "and the start gave none")
                + ": start it with start(environment:)"
        }
    }
}
