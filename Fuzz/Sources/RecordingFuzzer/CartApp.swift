import Foundation
import Spindle

// A small shop cart, shaped like a real app's loop: an event enum whose cases
// carry payloads (strings, numbers, optionals, a nested struct), a Codable
// state that a recording carries in its header, and one that is not Codable,
// whose initial state the replaying code supplies.

struct Address: Codable, Sendable, Equatable {
    var street: String
    var city: String
    var postcode: String?
}

enum CartEvent: Codable, Sendable, Equatable {
    case add(item: String, quantity: Int)
    case remove(item: String)
    case applyCoupon(code: String, percent: Double)
    case deliver(to: Address)
    case annotate(String?)
    case checkout
}

/// The Codable state: recorded in the header's `initial_state`.
struct Cart: Codable, Sendable, Equatable {
    var quantities: [String: Int] = [:]
    var discountPercent = 0.0
    var address: Address?
    var notes: [String] = []
    var checkedOut = false
}

/// A state that is not Encodable: its recordings' headers hold
/// `"initial_state": null`.
struct CartSummary: Sendable, Equatable {
    var events = 0
    var lastItem: String?
    var totalQuantity = 0
}

// The reducers are total over every decodable event, so that any crash under
// the fuzzer is the reader's: quantities from a recording can be anything,
// hence wrapping arithmetic, and a Double is never converted to an Int.

let cartReducer = Reducer<Cart, CartEvent> { cart, event in
    var cart = cart
    switch event {
    case .add(let item, let quantity):
        cart.quantities[item, default: 0] &+= quantity
    case .remove(let item):
        cart.quantities[item] = nil
    case .applyCoupon(_, let percent):
        cart.discountPercent = min(max(percent, 0), 100)
    case .deliver(let address):
        cart.address = address
    case .annotate(let note):
        if let note { cart.notes.append(note) }
    case .checkout:
        cart.checkedOut = true
    }
    return cart
}

let summaryReducer = Reducer<CartSummary, CartEvent> { summary, event in
    var summary = summary
    summary.events &+= 1
    switch event {
    case .add(let item, let quantity):
        summary.lastItem = item
        summary.totalQuantity &+= quantity
    case .remove(let item):
        summary.lastItem = item
    case .applyCoupon, .deliver, .annotate, .checkout:
        break
    }
    return summary
}
