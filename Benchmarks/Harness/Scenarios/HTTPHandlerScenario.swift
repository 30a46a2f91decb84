import HTTPExample
import NIOCore
import NIOEmbedded
import NIOHTTP1
@_spi(Testing) import Spindle

/// `http-handler`: what a request costs a NIO server's pipeline, without
/// the kernel. 100 connections, each a NIO testing channel with NIO's HTTP/1.1
/// server pipeline (decoder, pipelining handler, encoder) and then the
/// example server's connection handler (`Examples/HTTPExample`), all on one
/// testing event loop. Each request (a 35-byte `GET`) is one read and one
/// read complete on the next connection, round robin, as a socket read
/// delivers it; the handler answers in the read and flushes on read complete.
/// The responses end in a sink at the head of the pipeline, which counts
/// their bytes. `scripts/load.sh` measures the same handlers behind real
/// sockets, where the kernel and `wrk` share the cores: this scenario is the
/// part of a request that the handler, and Spindle in it, decides.
///
/// Engines (the example server's modes): `plain`, a `ChannelInboundHandler`
/// that answers on the request's end (the yardstick); `by-hand`, the spin's
/// reducer and replies called by such a handler, with no loop (the spin's
/// shape without the engine); `spindle-nio`, SpindleNIO's `SpinHandler` (a
/// loop per connection on its event loop; each read takes the idle loop by
/// the direct path).
///
/// Before the clock: the connections are made, and each answers one
/// request, which gives the length of a response. Clock: the first read →
/// the last read complete, all inside one call on the event loop. Rate:
/// requests / elapsed. Checked: every request answered within the clock,
/// with the same number of bytes; after it, the connections close and
/// (`spindle-nio`) every loop stops and is freed.
enum HTTPHandlerScenario {
    static let scenario = Scenario(
        name: "http-handler",
        producers: 1,
        description: """
            HTTP/1.1 GETs through 100 connections' NIO pipelines on one testing event loop (NIO's \
            HTTP server pipeline, then the example server's handler; no sockets), round robin, one \
            request per read. Engines: plain (a NIO handler, the yardstick), by-hand (the spin's \
            reducer in such a handler, no loop), spindle-nio (SpindleNIO's SpinHandler). Clock: \
            first read → last read complete. Rate: requests/s. Checked: every request answered in \
            the clock with the same bytes.
            """,
        defaultEvents: 400_000,
        quickEvents: 10_000,
        engines: [.plain, .byHand, .spindleNIO],
        yardstick: .plain,
        measure: measure)

    static let connections = 100
    static let request = ByteBuffer(string: "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")

    private static func measure(_ run: ScenarioRun) async throws -> Sample {
        let mode: HTTPServerMode
        switch run.engine {
        case .plain: mode = .plain
        case .byHand: mode = .byHand
        case .spindleNIO: mode = .spindleNIO
        default: throw BenchmarkFailure(scenario: run.scenario, engine: run.engine.rawValue, message: "not an HTTP handler")
        }
        let eventLoop = NIOAsyncTestingEventLoop()
        var channels: [NIOAsyncTestingChannel] = []
        var sinks: [ResponseSink] = []
        for _ in 0..<connections {
            let channel = NIOAsyncTestingChannel(loop: eventLoop)
            let sink = ResponseSink()
            try await eventLoop.executeInContext {
                try channel.pipeline.syncOperations.addHandler(sink)
                try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                try channel.pipeline.syncOperations.addHandler(mode.makeHandler())
            }
            try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).get()
            channels.append(channel)
            sinks.append(sink)
        }
        // The loops' first slices (each delivers its initial state) are
        // tasks on the event loop; then one request per connection.
        await eventLoop.run()
        let firstBytes = try await eventLoop.executeInContext { [channels, sinks] in
            for channel in channels { read(request, on: channel) }
            return sinks.map(\.bytes)
        }
        let responseBytes = firstBytes[0]
        try expect(responseBytes > 0 && firstBytes.allSatisfy { $0 == responseBytes },
                   "the first responses' lengths differ or are empty: \(Set(firstBytes))", in: run)

        let requests = run.events
        let region = MeasuredRegion.begin()
        let answered = try await eventLoop.executeInContext { [channels, sinks] in
            for index in 0..<requests { read(request, on: channels[index % connections]) }
            return sinks.reduce(0) { $0 + $1.bytes }
        }
        let (elapsed, allocations) = region.end()
        try expect(answered == (connections + requests) * responseBytes,
                   "\(answered) response bytes, expected \((connections + requests) * responseBytes)", in: run)

        for channel in channels { try await channel.close().get() }
        channels.removeAll()
        // A loop's last slice runs on the event loop once its stop's grace
        // period has passed (another thread): run the event loop until
        // every loop has stopped and been freed.
        let deadline = ContinuousClock.now + run.timeout
        while SpindleLiveObjects.current.loops > 0 {
            try expect(ContinuousClock.now < deadline, "the connections' loops did not stop", in: run)
            await eventLoop.run()
            try await Task.sleep(for: .milliseconds(1))
        }
        await eventLoop.shutdownGracefully()
        return Sample(events: requests, elapsedNanoseconds: elapsed, allocations: allocations)
    }

    /// One socket read's worth: the request, then read complete.
    private static func read(_ request: ByteBuffer, on channel: NIOAsyncTestingChannel) {
        let pipeline = channel.pipeline.syncOperations
        pipeline.fireChannelRead(NIOAny(request))
        pipeline.fireChannelReadComplete()
    }
}
