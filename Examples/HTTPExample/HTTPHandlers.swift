// The example HTTP server's connection handlers (`Examples/HTTPServer`,
// loaded by `scripts/load.sh`) and the benchmark harness's `http-handler`
// scenario: every mode answers `GET` with the same 13-byte body, byte for
// byte.
//
// - plain: a `ChannelInboundHandler` that answers on the request's end and
//   flushes on `channelReadComplete` (the yardstick: NIO as it is usually
//   written, as fast as it reasonably gets).
// - spindle-nio: SpindleNIO's `SpinHandler`: the connection's loop on its
//   event loop.
// - spindle-pool: the same spin on Spindle's shared reducer pool, its
//   replies handed back to the event loop (what a server did before
//   SpindleNIO).
// - by-hand: the spin's reducer and replies called by a plain handler, with
//   no loop: what a request costs in the spin's shape (one event and one
//   state per request, a reply function per state) without the engine. It
//   splits the gap between plain and spindle-nio into the shape's cost and
//   the engine's.
//
// Every Spindle mode makes one event per request, as SpindleNIO's article
// says a server does: a `RequestAssembler` per connection keeps the head's
// fields while NIO hands over the request's parts, and gives the event on
// its end.
public import NIOCore
import NIOHTTP1
import Spindle
import SpindleNIO
import Synchronization

/// A connection handler of each kind, by the name `--mode` and the reports use.
public enum HTTPServerMode: String, CaseIterable, Sendable {
    case plain
    case spindleNIO = "spindle-nio"
    case spindlePool = "spindle-pool"
    case byHand = "by-hand"

    /// A new handler for one connection, to add after NIO's HTTP server
    /// pipeline (`configureHTTPServerPipeline()`).
    public func makeHandler() -> any ChannelHandler {
        switch self {
        case .plain: return PlainHandler()
        case .byHand: return ByHandHandler()
        case .spindleNIO:
            // `event:` keeps the connection's decode state: one assembler
            // per handler, so per connection.
            let assembler = RequestAssembler()
            return SpinHandler(spin: connectionSpin, event: { assembler.event($0) }, write: writeReplies)
        case .spindlePool: return PoolHandler()
        }
    }
}

// MARK: The connection's protocol, as a spin

/// What the server answers, whatever the path.
let body = "Hello, World!"

/// One connection: the requests it has served, and the reply the last one
/// made.
struct HTTPConnection: Sendable {
    var version = HTTPVersion.http1_1
    var keepAlive = true
    var served = 0
    /// Set by each request's reduction: the state answers it.
    var replyDue = false
}

enum HTTPEvent: Sendable {
    /// A whole request (its head, any body, its end), as `RequestAssembler`
    /// put it together: what the reply needs of it.
    case request(version: HTTPVersion, keepAlive: Bool)
}

let connectionSpin = Spin<HTTPConnection, HTTPEvent>(
    initialState: HTTPConnection(), feedbacks: [],
    reducer: Reducer { state, event in
        var state = state
        switch event {
        case .request(let version, let keepAlive):
            state.version = version
            state.keepAlive = keepAlive
            state.served += 1
            state.replyDue = true
        }
        return state
    })

/// A connection's request decoder state: NIO hands over a request as parts
/// (a head, body parts, an end); the spin sees one event per request, made
/// on its end from what the reply needs of the head, kept here (as the
/// plain handler keeps it: not the head itself, whose copy would retain
/// its storage and its headers'). One per connection (its handler's
/// `event:` closure captures it), used on the connection's event loop only.
final class RequestAssembler {
    private var pending: (version: HTTPVersion, keepAlive: Bool)?

    /// The event for a part: the whole request on its end, nil before it.
    func event(_ part: HTTPServerRequestPart) -> HTTPEvent? {
        switch part {
        case .head(let head):
            pending = (head.version, head.isKeepAlive)
            return nil
        case .body:
            return nil
        case .end:
            guard let pending else { return nil }
            self.pending = nil
            return .request(version: pending.version, keepAlive: pending.keepAlive)
        }
    }
}

/// The response to a state whose request just ended (every mode's bytes),
/// part by part to `write`: head, body, end (no array per response).
@inline(__always)
func writeResponse(
    version: HTTPVersion, keepAlive: Bool, buffer: ByteBuffer, _ write: (HTTPServerResponsePart) -> Void
) {
    var headers = HTTPHeaders()
    headers.add(name: "content-length", value: String(buffer.readableBytes))
    headers.add(name: "content-type", value: "text/plain")
    if !keepAlive { headers.add(name: "connection", value: "close") }
    write(.head(HTTPResponseHead(version: version, status: .ok, headers: headers)))
    write(.body(.byteBuffer(buffer)))
    write(.end(nil))
}

let bodyBuffer = ByteBuffer(string: body)

/// A state's replies, part by part to `write` (none unless a request just ended).
@inline(__always)
func writeReplies(_ state: HTTPConnection, _ write: (HTTPServerResponsePart) -> Void) {
    if state.replyDue { writeResponse(version: state.version, keepAlive: state.keepAlive, buffer: bodyBuffer, write) }
}

/// SpindleNIO's form: the parts written straight to the channel.
@Sendable func writeReplies(_ state: HTTPConnection, _ replies: inout SpinReplies<HTTPServerResponsePart>) {
    writeReplies(state) { replies.write($0) }
}

/// The spindle-pool mode's form: the parts collected for the event loop.
@Sendable func replies(_ state: HTTPConnection) -> [HTTPServerResponsePart] {
    var parts: [HTTPServerResponsePart] = []
    writeReplies(state) { parts.append($0) }
    return parts
}

// MARK: plain

/// Replies written as they are made and flushed once, when the read burst
/// is complete (the plain and by-hand handlers).
struct BurstWriter {
    private var written = false

    mutating func write(_ part: HTTPServerResponsePart, context: ChannelHandlerContext) {
        context.write(NIOAny(part), promise: nil)
        written = true
    }

    mutating func readComplete(context: ChannelHandlerContext) {
        if written {
            written = false
            context.flush()
        }
        context.fireChannelReadComplete()
    }
}

/// The yardstick: answers on `.end`, flushes once per read burst.
final class PlainHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    private var version = HTTPVersion.http1_1
    private var keepAlive = true
    private var writer = BurstWriter()

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            version = head.version
            keepAlive = head.isKeepAlive
        case .body:
            break
        case .end:
            writeResponse(version: version, keepAlive: keepAlive, buffer: bodyBuffer) { writer.write($0, context: context) }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        writer.readComplete(context: context)
    }
}

// MARK: by-hand

/// The spin's reducer and replies, called by hand: no loop.
final class ByHandHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    private let assembler = RequestAssembler()
    private var state = connectionSpin.initialState
    private let reduce = connectionSpin.reducer.reduce
    private var writer = BurstWriter()

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let event = assembler.event(unwrapInboundIn(data)) else { return }
        state = reduce(state, event)
        writeReplies(state) { writer.write($0, context: context) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        writer.readComplete(context: context)
    }
}

// MARK: spindle-pool

/// The spin on the shared pool: replies collected by a feedback on the
/// pool, written on the event loop once per batch.
final class PoolHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    private let assembler = RequestAssembler()
    private var loop: SpinLoop<HTTPConnection, HTTPEvent>?

    func channelActive(context: ChannelHandlerContext) {
        let outbox = Outbox(context: NIOLoopBound(context, eventLoop: context.eventLoop))
        do {
            loop = try connectionSpin
                .addingReplyFeedbacks(outbox)
                .start()
        } catch {
            // The pool would not take the loop: this connection cannot be served.
            context.fireErrorCaught(error)
            context.close(promise: nil)
            return
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if let event = assembler.event(unwrapInboundIn(data)) { _ = loop?.emit(event) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        loop?.requestStop()
        context.fireChannelInactive()
    }
}

/// Replies made on the pool, waiting to be written on the event loop.
final class Outbox: Sendable {
    let context: NIOLoopBound<ChannelHandlerContext>
    private let pending = Mutex<[HTTPServerResponsePart]>([])

    init(context: NIOLoopBound<ChannelHandlerContext>) {
        self.context = context
    }

    func add(_ parts: [HTTPServerResponsePart]) {
        pending.withLock { $0.append(contentsOf: parts) }
    }

    /// Hands what is pending to the event loop: one hop per batch.
    func send() {
        let parts = pending.withLock { pending -> [HTTPServerResponsePart] in
            defer { pending.removeAll(keepingCapacity: true) }
            return pending
        }
        guard !parts.isEmpty else { return }
        let context = self.context
        context.eventLoop.execute {
            for part in parts { context.value.write(NIOAny(part), promise: nil) }
            context.value.flush()
        }
    }
}

extension Spin where State == HTTPConnection, Event == HTTPEvent {
    func addingReplyFeedbacks(_ outbox: Outbox) -> Spin {
        Spin(initialState: initialState, feedbacks: feedbacks + [
            Feedback(effect: { (state: HTTPConnection) in outbox.add(replies(state)) }),
            Feedback(effect: { (_: HTTPConnection) in outbox.send() }).delivering(.latestState),
        ], reducer: reducer)
    }
}
