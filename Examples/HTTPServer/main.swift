// An HTTP/1.1 server on swift-nio (keep-alive, pipelining), one connection
// per loop: the benchmark server of `scripts/load.sh`. The connection
// handlers, one per mode, are in `Examples/HTTPExample` (shared with the
// benchmark harness's `http-handler` scenario).
//
//   spindle-http-server --mode plain|spindle-nio|spindle-pool|by-hand [--port 8080] [--threads 2]
//
// `by-hand` is not in load.sh's table (SPINDLE_LOAD_MODES can name it).
//
// Prints "listening on PORT" once bound; runs until killed.
import Foundation
import HTTPExample
import NIOCore
import NIOHTTP1
import NIOPosix

var mode = HTTPServerMode.plain
var port = 8080
var threads = 2
let usage = "usage: spindle-http-server --mode \(HTTPServerMode.allCases.map(\.rawValue).joined(separator: "|")) [--port N] [--threads N]\n"
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--mode":
        guard let name = arguments.next(), let named = HTTPServerMode(rawValue: name) else {
            FileHandle.standardError.write(Data(usage.utf8))
            exit(2)
        }
        mode = named
    case "--port": port = arguments.next().flatMap(Int.init) ?? port
    case "--threads": threads = arguments.next().flatMap(Int.init) ?? threads
    default:
        FileHandle.standardError.write(Data(usage.utf8))
        exit(2)
    }
}

let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
let serverMode = mode
let server = try await ServerBootstrap(group: group)
    .serverChannelOption(.backlog, value: 4096)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    // Accept up to 256 connections per wake-up, not NIO's default 4: when
    // wrk opens 1,000 connections at once, the default spreads the accepts
    // over hundreds of event-loop turns, each serving every connection
    // accepted so far, and the last connections' first requests wait for
    // them (about a second on 2 cores). Their latency is then a start-up
    // transient, not the handler's, and it dominated every mode's p99 at
    // 1,000 connections.
    .serverChannelOption(.maxMessagesPerRead, value: 256)
    .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline()
            try channel.pipeline.syncOperations.addHandler(serverMode.makeHandler())
        }
    }
    .bind(host: "127.0.0.1", port: port).get()
FileHandle.standardOutput.write(Data("listening on \(server.localAddress!.port!)\n".utf8))
try await server.closeFuture.get()
