// The head of a connection's pipeline on NIO's testing channels, for the
// benchmark harness's `http-handler` scenario and `scripts/footprint.sh`'s
// driver: what the example server writes ends here, counted.
public import NIOCore

/// Counts the response bytes written and drops them (nothing reaches the
/// testing channel's buffers).
///
/// `@unchecked Sendable`: `bytes` is touched only on the connections' event
/// loop (its handler methods, and code the caller runs in that loop's
/// context), which the harness's `executeInContext` closures capture.
public final class ResponseSink: ChannelOutboundHandler, @unchecked Sendable {
    public typealias OutboundIn = IOData
    public private(set) var bytes = 0

    public init() {}

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        bytes += unwrapOutboundIn(data).readableBytes
        promise?.succeed()
    }

    public func flush(context: ChannelHandlerContext) {}
}
