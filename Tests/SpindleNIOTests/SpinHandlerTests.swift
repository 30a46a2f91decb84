#if SpindleNIO
import NIOCore
import NIOPosix
import Spindle
import SpindleNIO
import SpindleTestSupport
import Synchronization
import Testing

// A server on loopback whose connections each run a loop (SpinHandler): a
// protocol where each request is a number and each reply the running sum
// so far (64-bit integers on the wire), so a reply out of order, lost or repeated shows.

/// Reads the byte stream as 64-bit big-endian integers.
final class IntegerDecoder: ByteToMessageDecoder {
    typealias InboundOut = Int

    func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let value = buffer.readInteger(as: Int64.self) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(Int(value)))
        return .continue
    }
}

/// Writes integers as 64-bit big-endian.
final class IntegerEncoder: MessageToByteEncoder {
    typealias OutboundIn = Int

    func encode(data: Int, out: inout ByteBuffer) throws {
        out.writeInteger(Int64(data))
    }
}

/// The connection's state: the running sum, and the reply the last
/// request made.
struct SumState: Sendable, Equatable {
    var sum = 0
    var requests = 0
    var reply: Int?
}

let sumSpin = Spin<SumState, Int>(initialState: SumState(), feedbacks: [], reducer: Reducer { state, number in
    var state = state
    state.sum += number
    state.requests += 1
    state.reply = state.sum
    return state
})

/// Collects the client's replies (in a test-support `Recorder`).
final class ReplyCollector: ChannelInboundHandler, Sendable {
    typealias InboundIn = Int
    let replies = Recorder<Int>()
    func channelRead(context: ChannelHandlerContext, data: NIOAny) { replies.append(unwrapInboundIn(data)) }
}

/// The handlers the server made, one per connection.
final class Handlers: Sendable {
    let made = Mutex<[NIOLoopBound<SpinHandler<SumState, Int, Int, Int>>]>([])
}

@Suite struct SpinHandlerTests {
    /// Starts a server, runs `body` with its port, shuts it down.
    func withServer(
        group: MultiThreadedEventLoopGroup, handlers: Handlers,
        _ body: (Int) async throws -> Void
    ) async throws {
        let server = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = SpinHandler(
                        spin: sumSpin, event: { (number: Int) in number },
                        replies: { (state: SumState) in state.reply.map { [$0] } ?? [] })
                    handlers.made.withLock { $0.append(NIOLoopBound(handler, eventLoop: channel.eventLoop)) }
                    try channel.pipeline.syncOperations.addHandlers([
                        ByteToMessageHandler(IntegerDecoder()), MessageToByteHandler(IntegerEncoder()), handler,
                    ])
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        do {
            try await body(server.localAddress!.port!)
        } catch {
            try? await server.close()
            throw error
        }
        try await server.close()
    }

    func connect(group: MultiThreadedEventLoopGroup, port: Int, collector: ReplyCollector) async throws -> Channel {
        try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        ByteToMessageHandler(IntegerDecoder()), MessageToByteHandler(IntegerEncoder()), collector,
                    ])
                }
            }
            .connect(host: "127.0.0.1", port: port).get()
    }

    @Test func eachConnectionsRepliesComeInStateOrderAndTheLoopStopsWithTheChannel() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let handlers = Handlers()
        let requests = 2_000
        try await withServer(group: group, handlers: handlers) { port in
            let collectors = (0..<4).map { _ in ReplyCollector() }
            var clients: [Channel] = []
            for collector in collectors { clients.append(try await connect(group: group, port: port, collector: collector)) }
            // Pipelined: every request written before any reply is read.
            for client in clients {
                for number in 1...requests { client.write(number, promise: nil) }
                client.flush()
            }
            #expect(await eventually { collectors.allSatisfy { $0.replies.count == requests } })
            let expected = (1...requests).map { $0 * ($0 + 1) / 2 }
            for collector in collectors {
                #expect(collector.replies.values == expected)
            }
            for client in clients { try await client.close() }
        }
        // Each connection's loop stops with its channel, having reduced every request.
        let made = handlers.made.withLock { $0 }
        #expect(made.count == 4)
        for bound in made {
            let loop = try await bound.eventLoop.submit { bound.value.loop }.get()
            let report = try #require(await loop?.stop())
            #expect(report.reduced == requests)
            #expect(loop?.state.requests == requests)
        }
        try await group.shutdownGracefully()
    }
}
#endif
