// The driver of `scripts/footprint.sh`: NIO's HTTP/1.1 server pipeline and
// the example server's handler (`Examples/HTTPExample`, one mode) on
// `connections` EmbeddedChannels, then `requests` GETs round robin, each a
// read and a read complete, as the benchmark harness's `http-handler`
// scenario sends them. Synchronous on purpose: valgrind 3.19 crashes in a
// Swift program with an async main (see scripts/leak-check.sh), and
// callgrind counts what `measured` runs, nothing else.
//
//   http-footprint <mode> <connections> <requests>
import HTTPExample
import NIOCore
import NIOEmbedded
import NIOHTTP1
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One socket read's worth: the request, then read complete.
@inline(never)
func read(_ request: ByteBuffer, on channel: EmbeddedChannel) {
    let pipeline = channel.pipeline.syncOperations
    pipeline.fireChannelRead(NIOAny(request))
    pipeline.fireChannelReadComplete()
}

/// The part callgrind measures (`--toggle-collect`).
@inline(never)
func measured(_ requests: Int, _ request: ByteBuffer, on channels: [EmbeddedChannel]) {
    for index in 0..<requests { read(request, on: channels[index % channels.count]) }
}

func run() throws {
    let arguments = CommandLine.arguments
    guard arguments.count == 4, let mode = HTTPServerMode(rawValue: arguments[1]),
          let connections = Int(arguments[2]), connections > 0, let requests = Int(arguments[3]) else {
        print("usage: http-footprint <\(HTTPServerMode.allCases.map(\.rawValue).joined(separator: "|"))> <connections> <requests>")
        throw FootprintFailure()
    }
    let eventLoop = EmbeddedEventLoop()
    var channels: [EmbeddedChannel] = []
    var sinks: [ResponseSink] = []
    for _ in 0..<connections {
        let channel = EmbeddedChannel(loop: eventLoop)
        let sink = ResponseSink()
        try channel.pipeline.syncOperations.addHandler(sink)
        try channel.pipeline.syncOperations.configureHTTPServerPipeline()
        try channel.pipeline.syncOperations.addHandler(mode.makeHandler())
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        channels.append(channel)
        sinks.append(sink)
    }
    // The loops' first slices (each delivers its initial state), then one
    // request per connection: every connection has answered once.
    eventLoop.run()
    let request = ByteBuffer(string: "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
    for channel in channels { read(request, on: channel) }
    let first = sinks.map(\.bytes)
    measured(requests, request, on: channels)
    let total = sinks.reduce(0) { $0 + $1.bytes }
    // Every request answered, with the first response's bytes.
    guard let bytes = first.first, bytes > 0, first.allSatisfy({ $0 == bytes }),
          total == bytes * (connections + requests) else {
        print("http-footprint: \(total) response bytes, expected \((first.first ?? 0) * (connections + requests))")
        throw FootprintFailure()
    }
    print("http-footprint: \(mode.rawValue), \(connections) connections, \(requests) requests answered")
}

struct FootprintFailure: Error {}

do {
    try run()
} catch {
    exit(1)
}
