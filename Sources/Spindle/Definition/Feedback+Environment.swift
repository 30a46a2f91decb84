/// A per-start feedback's maker (see ``Feedback/withEnvironment(_:_:)``):
/// given a start's environment, the feedbacks it makes, or nil when the
/// environment is not of the type it needs.
package struct EnvironmentFactory<State: Sendable, Event: Sendable>: Sendable {
    /// The environment type it needs, for the start's error.
    package let expected: String
    package let make: @Sendable (any Sendable) -> Feedback<State, Event>?

    /// The same, with `transform` applied to what it makes (a modifier
    /// applied to a per-start feedback).
    func mapping(_ transform: @escaping @Sendable (Feedback<State, Event>) -> Feedback<State, Event>) -> Self {
        let make = self.make
        return EnvironmentFactory(expected: expected) { environment in make(environment).map(transform) }
    }
}

extension Feedback {
    /// A feedback made anew for each start of the spin, from that start's
    /// environment: how one spin definition, started many times, reaches a
    /// channel, a connection id or a client of each start from its own
    /// feedbacks, without being rebuilt.
    ///
    /// ```swift
    /// struct Connection: Sendable { let id: Int; let send: @Sendable (String) -> Void }
    ///
    /// let session = Spin(initialState: Session(), reducer: sessionReducer) {
    ///     Feedback.withEnvironment { (connection: Connection) in
    ///         Feedback(effect: { (state: Session) in connection.send(state.reply) })
    ///     }
    /// }
    /// let loop = try session.start(environment: Connection(id: 7, send: write))
    /// ```
    ///
    /// `make` is called once per start, before the loop's first slice; the
    /// feedback it makes takes this one's place (a merged feedback's parts
    /// take it in order). Modifiers applied to this feedback
    /// (``filtered(by:)``, ``execute(on:)``, ``delivering(_:)``, …) apply to
    /// what `make` makes.
    ///
    /// A spin with a per-start feedback starts only with an environment of
    /// the type `make` takes (``Spin/start(environment:options:)``); started
    /// without one, or with one of another type, it does not start:
    /// ``Spin/start(environment:options:)`` throws
    /// ``SpinExecutorError/missingEnvironment(expected:given:)``.
    /// - Parameters:
    ///   - environment: the environment's type (inferred from `make`).
    ///   - make: makes this start's feedback from its environment.
    public static func withEnvironment<Environment: Sendable>(
        _ environment: Environment.Type = Environment.self,
        _ make: @escaping @Sendable (Environment) -> Feedback
    ) -> Feedback {
        let factory = EnvironmentFactory<State, Event>(expected: String(describing: Environment.self)) { given in
            (given as? Environment).map(make)
        }
        return Feedback(effect: .perStart(factory), queue: nil, strategy: .cancelOnNewState)
    }
}

extension Spin {
    /// Starts a loop running this spin with `environment` as this start's
    /// environment: every per-start feedback (``Feedback/withEnvironment(_:_:)``)
    /// is made from it, before the first slice. Everything else (the
    /// reducer, the other feedbacks, the observers) is shared by every
    /// start.
    /// - Parameters:
    ///   - environment: this start's environment.
    ///   - options: the executor, queue and tuning for this loop.
    /// - Throws: ``SpinExecutorError``: as ``start(options:)``, or
    ///   ``SpinExecutorError/missingEnvironment(expected:given:)`` when a
    ///   per-start feedback needs an environment of another type.
    /// - Returns: the running loop.
    public func start(
        environment: some Sendable, options: SpinOptions = .init()
    ) throws(SpinExecutorError) -> SpinLoop<State, Event> {
        try SpinLoop.start(spin: self, options: options, environment: environment)
    }

    /// This spin with its per-start feedbacks made from `environment`, in
    /// their places; itself when it has none. When one cannot be made (no
    /// environment, or one of another type), the error, and this spin
    /// without its per-start feedbacks (what a loop that does not start is
    /// built from).
    package func resolvingEnvironment(_ environment: (any Sendable)?) -> (spin: Spin, error: SpinExecutorError?) {
        guard needsEnvironment else { return (self, nil) }
        var resolved: [Feedback<State, Event>] = []
        for feedback in feedbacks {
            guard case .perStart(let factory) = feedback.effect else {
                resolved.append(feedback)
                continue
            }
            guard let environment, let made = factory.make(environment) else {
                let error = SpinExecutorError.missingEnvironment(
                    expected: factory.expected, given: environment.map { String(describing: type(of: $0)) })
                return (replacingFeedbacks(with: feedbacks.filter { !$0.isPerStart }), error)
            }
            resolved.append(made)
        }
        return (replacingFeedbacks(with: resolved), nil)
    }
}

extension Feedback {
    /// Whether this is a per-start feedback (``withEnvironment(_:_:)``).
    var isPerStart: Bool {
        if case .perStart = effect { true } else { false }
    }
}
