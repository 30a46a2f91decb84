public import Spindle

/// A Spindle loop as an atom: its value is the loop's latest state.
///
/// The loop starts when the atom is first used (watched, or read) and
/// stops, draining what it accepted, when the atom is released. Send it
/// events with ``AtomStore/emit(_:to:)``. Its states enter the graph
/// conflated: a busy loop never waits for the graph or its watchers, which
/// may skip intermediate states but always get to the latest one, and to
/// the final one.
///
/// Computing the atom again (an atom that ``spin(context:)`` watches
/// changed, or a refresh) stops the loop and starts a new one from the new
/// spin's initial state.
///
/// @Snippet(path: "Spindle/Snippets/SpindleAtoms/AtomsGettingStarted", slice: "spin")
///
/// > Important: A loop that cannot start (its executor refused it) leaves
/// > the atom at the spin's initial state with no loop behind it: emits
/// > answer `EmitResult.stopped`, ``AtomStore/loop(of:)`` is nil, and the
/// > logger of the atom's ``options`` says why.
public protocol SpinAtom: Atom where Produced == State {
    associatedtype State: Sendable
    associatedtype Event: Sendable
    typealias Context = AtomTransactionContext

    /// The spin to run.
    func spin(context: Context) throws(AtomError) -> Spin<State, Event>

    /// The loop's options (its executor, queue, observers); the default
    /// options by default.
    var options: SpinOptions { get }

    /// The largest share of one core (above 0, at most 1) that taking the
    /// loop's states into the graph may use; 0.05 by default. 1 takes each
    /// latest state as soon as the last one is in: a flooded loop then
    /// shares its cores with the graph.
    var maximumIntakeLoad: Double { get }
}

extension SpinAtom {
    public var options: SpinOptions { SpinOptions() }

    public var maximumIntakeLoad: Double { 0.05 }

    public var producer: AtomProducer<State> {
        AtomProducer { context throws(AtomError) in
            let spin = try self.spin(context: context)
            let loop: SpinLoop<State, Event>
            do {
                loop = try spin.start(options: self.options)
            } catch {
                options.logger.error("SpindleAtoms: \(String(describing: self))'s loop could not start: \(String(describing: error))")
                return spin.initialState
            }
            try context.keepResource(loop)
            let updater = try context.updater(of: Produced.self)
            let states = loop.states(bufferingPolicy: .latest)
            let load = Swift.min(Swift.max(self.maximumIntakeLoad, 0.001), 1)
            let task = Task {
                let clock = ContinuousClock()
                for await state in states {
                    let began = clock.now
                    updater.update(state)
                    guard load < 1 else { continue }
                    // The graph's work on this state, stretched to `load`
                    // of the time until the next one is taken.
                    let pause = (clock.now - began) * ((1 - load) / load)
                    try? await Task.sleep(for: pause)
                }
            }
            context.addTermination {
                loop.requestStop(.drain)
                task.cancel()
            }
            return loop.state
        }
    }
}
