import Spindle

/// What the session tells the catalogue, through the gear.
enum SessionNews: Equatable, Sendable {
    /// The user asked to see this page.
    case userMovedTo(page: Int)
    /// The user logged out: the catalogue forgets what it showed.
    case userLoggedOut
}

// MARK: - The session spin: who is logged in and where they want to go

enum Session: Equatable, Sendable {
    case anonymous
    case browsing(user: String, page: Int)
    case loggedOut(user: String)
}

enum SessionEvent: Sendable {
    case logIn(user: String)
    case goTo(page: Int)
    case logOut
}

/// The session's reducer: pure, no side effects.
@Sendable func sessionReducer(_ session: Session, _ event: SessionEvent) -> Session {
    switch (session, event) {
    case (.anonymous, .logIn(let user)), (.loggedOut, .logIn(let user)):
        return .browsing(user: user, page: 1)
    case (.browsing(let user, _), .goTo(let page)):
        return .browsing(user: user, page: page)
    case (.browsing(let user, _), .logOut):
        return .loggedOut(user: user)
    default:
        return session  // e.g. goTo while logged out: ignored
    }
}

/// state → gear: each new session state tells the catalogue what to do.
@Sendable func news(of session: Session) -> SessionNews? {
    switch session {
    case .anonymous: return nil
    case .browsing(_, let page): return .userMovedTo(page: page)
    case .loggedOut: return .userLoggedOut
    }
}

/// Render feedback: prints every state, returns no event.
@Sendable func renderSession(_ session: Session) -> SessionEvent? {
    switch session {
    case .anonymous: Console.line("session", "nobody logged in")
    case .browsing(let user, let page): Console.line("session", "\(user) wants page \(page)")
    case .loggedOut(let user): Console.line("session", "\(user) logged out")
    }
    return nil
}

func makeSessionSpin(gear: Gear<SessionNews>) -> Spin<Session, SessionEvent> {
    Spin(initialState: .anonymous) {
        // Rendering runs inline on the reducer thread, right after each
        // reduction: printing is cheap, and the lines come out in order.
        Feedback(effect: renderSession).executeOnReducerThread()
        // state → gear, closure form
        Feedback(attachedTo: gear, toGear: { (session: Session) -> SessionNews? in news(of: session) })
        Reducer(sessionReducer)
    }
}
