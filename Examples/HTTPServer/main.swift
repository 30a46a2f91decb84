// An HTTP/1.1 server on swift-nio (keep-alive, pipelining), one connection
// per loop: the benchmark server of `scripts/load.sh`. Every mode answers
// `GET` with the same 13-byte body, byte for byte.
//
//   spindle-http-server --mode plain|spindle-nio|spindle-pool|by-hand [--port 8080] [--threads 2]
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
//   no loop: what a request costs in the spin's shape (two events, two
//   states, a reply function per state) without the engine. Not in
//   load.sh's table (SPINDLE_LOAD_MODES can name it): it splits the gap
//   between plain and spindle-nio into the shape's cost and the engine's.
//
// Prints "listening on PORT" once bound; runs until killed.
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Spindle
import SpindleNIO
import Synchronization

// MARK: The connection's protocol, as a spin

/// What the server answers, whatever the path.
let body = "Hello, World!"

/// One connection: the request being read, and the reply the last complete
/// request made.
struct HTTPConnection: Sendable {
    var version = HTTPVersion.http1_1
    var keepAlive = true
    var served = 0
    /// Set by the reduction of a request's end, cleared by the next event.
    var replyDue = false
}

enum HTTPEvent: Sendable {
    case head(version: HTTPVersion, keepAlive: Bool)
    case end
}

let connectionSpin = Spin<HTTPConnection, HTTPEvent>(
    initialState: HTTPConnection(), feedbacks: [],
    reducer: Reducer { state, event in
        var state = state
        switch event {
        case .head(let version, let keepAlive):
            state.version = version
            state.keepAlive = keepAlive
            state.replyDue = false
        case .end:
            state.served += 1
            state.replyDue = true
        }
        return state
    })

/// The request part's event (a body part changes nothing here).
func event(_ part: HTTPServerRequestPart) -> HTTPEvent? {
    switch part {
    case .head(let head): .head(version: head.version, keepAlive: head.isKeepAlive)
    case .body: nil
    case .end: .end
    }
}

/// The response to a state whose request just ended (every mode's bytes).
func responseParts(version: HTTPVersion, keepAlive: Bool, buffer: ByteBuffer) -> [HTTPServerResponsePart] {
    var headers = HTTPHeaders()
    headers.add(name: "content-length", value: String(buffer.readableBytes))
    headers.add(name: "content-type", value: "text/plain")
    if !keepAlive { headers.add(name: "connection", value: "close") }
    return [
        .head(HTTPResponseHead(version: version, status: .ok, headers: headers)),
        .body(.byteBuffer(buffer)),
        .end(nil),
    ]
}

let bodyBuffer = ByteBuffer(string: body)

@Sendable func replies(_ state: HTTPConnection) -> [HTTPServerResponsePart] {
    state.replyDue ? responseParts(version: state.version, keepAlive: state.keepAlive, buffer: bodyBuffer) : []
}

// MARK: plain

/// Replies written as they are made and flushed once, when the read burst
/// is complete (the plain and by-hand handlers).
struct BurstWriter {
    private var written = false

    mutating func write(_ parts: [HTTPServerResponsePart], context: ChannelHandlerContext) {
        for part in parts {
            context.write(NIOAny(part), promise: nil)
            written = true
        }
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
            writer.write(responseParts(version: version, keepAlive: keepAlive, buffer: bodyBuffer), context: context)
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
    private var state = connectionSpin.initialState
    private let reduce = connectionSpin.reducer.reduce
    private var writer = BurstWriter()

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let event = event(unwrapInboundIn(data)) else { return }
        state = reduce(state, event)
        writer.write(replies(state), context: context)
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
        if let event = event(unwrapInboundIn(data)) { _ = loop?.emit(event) }
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

// MARK: The server

var mode = "plain"
var port = 8080
var threads = 2
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--mode": mode = arguments.next() ?? mode
    case "--port": port = arguments.next().flatMap(Int.init) ?? port
    case "--threads": threads = arguments.next().flatMap(Int.init) ?? threads
    default:
        FileHandle.standardError.write(Data("usage: spindle-http-server --mode plain|spindle-nio|spindle-pool|by-hand [--port N] [--threads N]\n".utf8))
        exit(2)
    }
}
guard ["plain", "spindle-nio", "spindle-pool", "by-hand"].contains(mode) else {
    FileHandle.standardError.write(Data("unknown mode \(mode)\n".utf8))
    exit(2)
}

let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
let serverMode = mode
let server = try await ServerBootstrap(group: group)
    .serverChannelOption(.backlog, value: 4096)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline()
            switch serverMode {
            case "plain":
                try channel.pipeline.syncOperations.addHandler(PlainHandler())
            case "by-hand":
                try channel.pipeline.syncOperations.addHandler(ByHandHandler())
            case "spindle-nio":
                try channel.pipeline.syncOperations.addHandler(
                    SpinHandler(spin: connectionSpin, event: event, replies: replies))
            default:
                try channel.pipeline.syncOperations.addHandler(PoolHandler())
            }
        }
    }
    .bind(host: "127.0.0.1", port: port).get()
FileHandle.standardOutput.write(Data("listening on \(server.localAddress!.port!)\n".utf8))
try await server.closeFuture.get()
