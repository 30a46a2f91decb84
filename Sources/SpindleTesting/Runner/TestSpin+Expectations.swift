import Spindle

extension TestSpin where State: Equatable {
    /// Checks every state so far: `expected` must equal ``states``, the
    /// initial state first.
    ///
    /// - Throws: ``SpecFailure`` naming the first state that differs (and
    ///   the event that produced it), with a line diff, the states and the
    ///   effect log.
    public func expectStates(_ expected: [State], fileID: String = #fileID, line: Int = #line) throws {
        let actual = states
        let events = events
        if let index = zip(expected, actual).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
            let cause = index == 0 ? "the initial state" : "the state after event \(index) (\(events[index - 1]))"
            throw failure(
                "\(cause) is not the expected one",
                extra: Rendering.labeled("expected state \(index)", expected[index])
                    + Rendering.labeled("actual state \(index)", actual[index])
                    + Rendering.difference(expected: expected[index], actual: actual[index]),
                fileID: fileID,
                line: line
            )
        }
        if expected.count != actual.count {
            throw failure("expected \(expected.count) states, but there are \(actual.count)", fileID: fileID, line: line)
        }
    }

    /// Checks the latest state.
    /// - Throws: ``SpecFailure`` with the expected and actual states, a line
    ///   diff, the states and the effect log.
    public func expectState(_ expected: State, fileID: String = #fileID, line: Int = #line) throws {
        let actual = state
        guard actual != expected else { return }
        throw failure(
            "the latest state is not the expected one",
            extra: Rendering.labeled("expected state", expected) + Rendering.difference(expected: expected, actual: actual),
            fileID: fileID,
            line: line
        )
    }
}

extension TestSpin {
    /// Runs until idle (see ``runUntilIdle(timeout:)``) and checks that the
    /// spin settled.
    /// - Throws: ``SpecFailure`` saying what it is waiting on, with the
    ///   states and the effect log.
    public func expectSettled(timeout: Duration = .zero, fileID: String = #fileID, line: Int = #line) throws {
        let settlement = runUntilIdle(timeout: timeout)
        guard settlement != .settled else { return }
        throw failure("expected the spin to settle, but it is \(settlement)", fileID: fileID, line: line)
    }

    func failure(_ what: String, extra: String = "", fileID: String, line: Int) -> SpecFailure {
        var text = "TestSpin failed: \(what)\n"
        text += extra
        text += "states:\n"
        let events = events
        for (index, state) in states.enumerated() {
            let cause = index == 0 ? "initial" : "after \(events[index - 1])"
            text += "  \(index). \(state)  (\(cause))\n"
        }
        let log = effectLog
        text += log.count > 40 ? "effect log (the last 40 of \(log.count) entries):\n" : "effect log:\n"
        if log.isEmpty { text += "  (empty)\n" }
        for entry in log.suffix(40) {
            text += "  \(entry)\n"
        }
        return SpecFailure(message: String(text.dropLast()), fileID: fileID, line: line)
    }
}
