// A line server on swift-nio whose connections each run a loop: each
// request is a number, each reply the connection's running sum. The loop
// runs on the channel's event loop; `SpinHandler` emits each decoded line
// and writes the replies the states ask for, in order.

// snippet.hide
import NIOCore
import NIOPosix
import Spindle
import SpindleNIO
import Synchronization

/// Splits a byte stream into lines.
final class LineDecoder: ByteToMessageDecoder {
    typealias InboundOut = String

    func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else { return .needMoreData }
        let line = buffer.readString(length: newline - buffer.readerIndex)!
        buffer.moveReaderIndex(forwardBy: 1)
        context.fireChannelRead(wrapInboundOut(line))
        return .continue
    }
}

/// Writes strings as lines.
final class LineEncoder: MessageToByteEncoder {
    typealias OutboundIn = String

    func encode(data: String, out: inout ByteBuffer) throws {
        out.writeString(data + "\n")
    }
}

/// The client side: counts the replies and keeps the last.
final class Replies: ChannelInboundHandler, Sendable {
    typealias InboundIn = String
    let received = Mutex<[String]>([])
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let line = unwrapInboundIn(data)
        received.withLock { $0.append(line) }
    }
}

/// Counts the connections' loops that stopped: the teardown waits for them
/// before it shuts the event loops down (a loop's last slice runs there).
final class Stops: SpinObserver, Sendable {
    typealias State = Connection
    typealias Event = Int
    let count = Mutex(0)
    func loopStopped(_ report: StopReport) { count.withLock { $0 += 1 } }
}
let stops = Stops()
// snippet.show

// snippet.connection
/// One connection's state: the running sum, and the reply the last request made.
struct Connection: Sendable {
    var sum = 0
    var reply: String?
}

// One spin for every connection: a pure reducer; the handler writes replies.
let connection = Spin<Connection, Int>(initialState: Connection(), feedbacks: [], reducer: Reducer { state, number in
    Connection(sum: state.sum + number, reply: String(state.sum + number))
})
// snippet.hide
.observed(by: stops)
// snippet.show
// snippet.end

// snippet.server
let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
let server = try await ServerBootstrap(group: group)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandlers([
                ByteToMessageHandler(LineDecoder()),
                MessageToByteHandler(LineEncoder()),
                SpinHandler(spin: connection,
                            event: { (line: String) in Int(line) },
                            replies: { (state: Connection) in state.reply.map { [$0] } ?? [] }),
            ])
        }
    }
    .bind(host: "127.0.0.1", port: 0).get()
// snippet.end

// snippet.hide
let replies = Replies()
let client = try await ClientBootstrap(group: group)
    .channelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandlers([
                ByteToMessageHandler(LineDecoder()), MessageToByteHandler(LineEncoder()), replies,
            ])
        }
    }
    .connect(host: "127.0.0.1", port: server.localAddress!.port!).get()
for number in 1...100 { client.write(String(number), promise: nil) }
client.flush()
let deadline = ContinuousClock.now + .seconds(60)
while replies.received.withLock({ $0.count }) < 100, ContinuousClock.now < deadline {
    try await Task.sleep(for: .milliseconds(1))
}
let received = replies.received.withLock { $0 }
precondition(received == (1...100).map { String($0 * ($0 + 1) / 2) }, "replies: \(received.prefix(5))…")
try await client.close().get()
// The connection's loop stops (with drain) when its channel goes inactive.
while stops.count.withLock({ $0 }) < 1, ContinuousClock.now < deadline {
    try await Task.sleep(for: .milliseconds(1))
}
precondition(stops.count.withLock { $0 } == 1, "the connection's loop did not stop with its channel")
try await server.close().get()
try await group.shutdownGracefully()
print("100 replies, in order; the last: \(received.last!)")
