// A spin behind a user interface: a UISpin renders every state on the main
// queue into a screen object and binds a value of the state to an event;
// an ObservationSpin does the same for SwiftUI, as an @Observable model.

// snippet.hide
import Foundation
import Observation
// snippet.show
// snippet.screen
import Dispatch
import Spindle

struct Contact: Equatable, Sendable { var name = "" }
enum ContactEvent: Sendable { case rename(String) }

let contactSpin = Spin<Contact, ContactEvent>(initialState: Contact()) {
    Reducer { contact, event in
        switch event {
        case .rename(let name): return Contact(name: name)
        }
    }
}

final class ContactScreen {
    let uiSpin: UISpin<Contact, ContactEvent>

    init(renderOn queue: DispatchQueue = .main) {
        uiSpin = UISpin(spin: contactSpin, renderOn: queue)
        uiSpin.render(on: self, using: { $0.render(state:) })
        uiSpin.start()
    }

    func render(state: Contact) {
        print("name: \(state.name)")
    }
}
// snippet.end

// snippet.hide
/// Polls `condition` every millisecond (on the main actor, which lets the
/// main queue run meanwhile) until it holds; a hang guard fails the
/// program after ten seconds.
func waitUntil(_ what: String, _ condition: () -> Bool) async {
    let deadline = ContinuousClock.now + .seconds(10)
    while !condition() {
        precondition(ContinuousClock.now < deadline, "timed out waiting until \(what)")
        try? await Task.sleep(for: .milliseconds(1))
    }
}

/// A second container for the screen's UISpin: what it renders, and
/// whether each render ran on the main queue.
final class ContactProbe {
    static let mainKey = DispatchSpecificKey<Int>()
    var names: [String] = []
    var onMainQueue: [Bool] = []
    func render(state: Contact) {
        names.append(state.name)
        onMainQueue.append(DispatchQueue.getSpecific(key: Self.mainKey) == 1)
    }
}
DispatchQueue.main.setSpecific(key: ContactProbe.mainKey, value: 1)
// snippet.show

// snippet.binding
let screen = ContactScreen()
let name = screen.uiSpin.binding(for: \.name, event: { .rename($0) })
name.set("Ada")  // emits .rename("Ada"); "name: Ada" is rendered once it is reduced
// snippet.end
// snippet.hide
await waitUntil("the rename is reduced") { name.get() == "Ada" }
// A container added later first gets the last rendered state, on the main queue.
let probe = ContactProbe()
screen.uiSpin.render(on: probe, using: { $0.render(state:) })
await waitUntil("the probe renders the last state") { probe.names.last == "Ada" }
precondition(probe.names.allSatisfy { $0 == "Ada" }, "late container: \(probe.names)")
precondition(probe.onMainQueue.allSatisfy { $0 }, "a render ran off the main queue")

// Before start(), a UISpin accepts nothing.
let idle = UISpin(spin: contactSpin)
precondition(idle.emit(.rename("Grace")) == .stopped, "emit before start()")
precondition(idle.state == Contact(), "the initial state before start()")
// snippet.show

// snippet.observation
let contact = ObservationSpin(spin: contactSpin)  // on the main actor
contact.start()
contact.emit(.rename("Grace"))  // contact.state follows, on the main actor
// snippet.end
// snippet.hide
let changed = ObservationFlag()
withObservationTracking {
    _ = contact.state
} onChange: {
    changed.set()
}
await waitUntil("the observable state follows the loop") { contact.state.name == "Grace" }
precondition(changed.isSet, "observation saw the state change")

/// Set once by an observation's onChange (any thread).
final class ObservationFlag: Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}
// snippet.show

// snippet.swiftui
#if canImport(SwiftUI)
import SwiftUI

struct ContactView: View {
    @State private var contact = ObservationSpin(spin: contactSpin)

    var body: some View {
        let name = contact.binding(for: \.name, event: { .rename($0) })
        VStack {
            Text("Hello, \(contact.state.name)")
            TextField("Name", text: Binding(get: name.get, set: name.set))
        }
        .onAppear { contact.start() }
    }
}
#endif
// snippet.end
