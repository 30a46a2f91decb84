// An `ObservableSpin`: an `ObservableObject` on the main actor whose
// `@Published` state follows the loop, and a binding whose setter emits an
// event.
import Spindle
import SpindleCombine
// snippet.hide
import Dispatch

struct Contact: Equatable, Sendable { var name = "" }
enum ContactEvent: Sendable { case rename(String) }

let contactSpin = Spin<Contact, ContactEvent>(initialState: Contact()) {
    Reducer { contact, event in
        switch event {
        case .rename(let name): return Contact(name: name)
        }
    }
}

// Every name published, and whether it came on the main queue. This
// program's top-level code awaits, so its main thread serves the main queue.
let mainQueue = DispatchSpecificKey<Int>()
DispatchQueue.main.setSpecific(key: mainQueue, value: 1)
let (published, publishing) = AsyncStream.makeStream(of: (name: String, onMain: Bool).self)
// snippet.show

let contact = ObservableSpin(spin: contactSpin)  // publishes on the main queue
let names = contact.$state
    .sink { state in
        print("name: \(state.name)")  // the current state now, then on the main queue
        // snippet.hide
        publishing.yield((state.name, DispatchQueue.getSpecific(key: mainQueue) == 1))
        // snippet.show
    }
contact.start()

let name = contact.binding(for: \.name, event: { .rename($0) })
name.set("Ada")  // emits .rename("Ada"); "name: Ada" is printed once it is reduced
// snippet.hide
var seen: [(name: String, onMain: Bool)] = []
for await value in published {
    seen.append(value)
    if value.name == "Ada" { break }
}
// The first value is `$state`'s own, sent on subscription (on this thread);
// the rest come on the main queue.
precondition(seen.first?.name == "", "the sink should first get the initial state, got \(seen)")
precondition(seen.dropFirst().allSatisfy(\.onMain), "states should be published on the main queue: \(seen)")
precondition(name.get() == "Ada", "the binding should read the reduced name, not \(name.get())")
precondition(contact.state.name == "Ada", "the published state should be Ada's, not \(contact.state)")
names.cancel()
