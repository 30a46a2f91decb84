#if SpindleNIO
import NIOCore
import NIOEmbedded
@_spi(Testing) @testable import Spindle
import SpindleNIO
import SpindleTestSupport
import Testing

// SpinHandler on swift-nio's testing channel: its event loop runs only when
// the test says so (`run()`), so what the handler does with each message,
// each `read` and each writability change is checked step by step, with no
// clock.

/// Counts the `read` requests that reach it (it sits between the channel's
/// head and the handler under test).
final class ReadCounter: ChannelOutboundHandler, Sendable {
    typealias OutboundIn = Never
    let reads = Recorder<Void>()

    func read(context: ChannelHandlerContext) {
        reads.append(())
        context.read()
    }
}

/// Makes a read from inside each of its first writes (one message of
/// `reads` per write), as NIO's pipelining assist does, and counts flushes.
final class ReadingWriter: ChannelDuplexHandler, Sendable {
    typealias InboundIn = Int
    typealias InboundOut = Int
    typealias OutboundIn = Int
    typealias OutboundOut = Int
    let reads: [Int]
    let readsMade = Recorder<Int>()
    let flushes = Recorder<Void>()

    init(reads: [Int]) { self.reads = reads }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(data, promise: promise)
        let made = readsMade.count
        if made < reads.count {
            readsMade.append(reads[made])
            context.fireChannelRead(wrapInboundOut(reads[made]))
        }
    }

    func flush(context: ChannelHandlerContext) {
        flushes.append(())
        context.flush()
    }
}

@Suite struct SpinHandlerEmbeddedTests {
    /// A channel with `ReadCounter` then a `SpinHandler` running `spin`,
    /// activated (so the handler's loop has started), writable or not then.
    func makeChannel(
        spin: Spin<SumState, Int> = sumSpin, options: SpinOptions = SpinOptions(), writable: Bool = true
    ) async throws -> (NIOAsyncTestingChannel, ReadCounter, NIOLoopBound<SpinHandler<SumState, Int, Int, Int>>) {
        let channel = NIOAsyncTestingChannel()
        channel.isWritable = writable
        let counter = ReadCounter()
        let handler = try await channel.testingEventLoop.executeInContext {
            let handler = SpinHandler(
                spin: spin, options: options, event: { (number: Int) in number },
                replies: { (state: SumState) in state.reply.map { [$0] } ?? [] })
            try channel.pipeline.syncOperations.addHandlers([counter, handler])
            return NIOLoopBound(handler, eventLoop: channel.eventLoop)
        }
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).get()
        await channel.testingEventLoop.run()
        return (channel, counter, handler)
    }

    /// Runs the event loop until `count` replies were written, and returns them.
    func replies(_ count: Int, from channel: NIOAsyncTestingChannel) async throws -> [Int] {
        var replies: [Int] = []
        let deadline = ContinuousClock.now + hangGuard
        while replies.count < count, ContinuousClock.now < deadline {
            await channel.testingEventLoop.run()
            while let reply = try await channel.readOutbound(as: Int.self) { replies.append(reply) }
            if replies.count < count { try? await Task.sleep(for: .milliseconds(1)) }
        }
        return replies
    }

    @Test func eachStateIsRepliedToInOrderAndTheInitialStateIsNot() async throws {
        let (channel, _, bound) = try await makeChannel()
        // No reply for the initial state: nothing was asked.
        #expect(try await channel.readOutbound(as: Int.self) == nil)
        for number in 1...5 { try await channel.writeInbound(number) }
        #expect(try await replies(5, from: channel) == [1, 3, 6, 10, 15])
        _ = try await closeAndStop(channel, bound)
    }

    @Test func eachReadOnTheEventLoopIsReducedInTheReadByTheDirectPath() async throws {
        let (channel, _, bound) = try await makeChannel()
        // More reads than a lane's streak (64): a loop found idle is not
        // streaming, so the event loop never opens a lane for it.
        let reads = 200
        for number in 1...reads { try await channel.writeInbound(number) }
        // Each read found its loop idle with an empty queue: it took the
        // loop and reduced its message in the read (no task queued, so no
        // `run()` is needed for the replies).
        var replies: [Int] = []
        while let reply = try await channel.readOutbound(as: Int.self) { replies.append(reply) }
        #expect(replies == (1...reads).map { $0 * ($0 + 1) / 2 })
        let runs = try #require(try await channel.testingEventLoop.executeInContext { bound.value.loop }).runsInPlace
        #expect(runs.direct == reads && runs.inline == 0, "\(runs)")
        _ = try await closeAndStop(channel, bound)
    }

    @Test func readsAreHeldWhileTheChannelIsNotWritableAndResumeWhenItIs() async throws {
        let (channel, counter, bound) = try await makeChannel()
        let readsBefore = counter.reads.count
        channel.isWritable = false
        try await channel.testingEventLoop.executeInContext {
            channel.pipeline.fireChannelWritabilityChanged()
            channel.read()
        }
        // The handler held the read back: it never reached the counter.
        #expect(counter.reads.count == readsBefore)
        // Messages already read are still reduced and replied to.
        try await channel.writeInbound(7)
        #expect(try await replies(1, from: channel) == [7])
        channel.isWritable = true
        try await channel.testingEventLoop.executeInContext {
            channel.pipeline.fireChannelWritabilityChanged()
        }
        // Writable again: the held read goes on, once.
        #expect(counter.reads.count == readsBefore + 1)
        // And later reads pass straight through.
        try await channel.testingEventLoop.executeInContext { channel.read() }
        #expect(counter.reads.count == readsBefore + 2)
        _ = try await closeAndStop(channel, bound)
    }

    /// The handler keeps the channel's writability from its changes, and
    /// takes it from the channel when its loop starts: a channel that is not
    /// writable then holds reads from the first.
    @Test func aChannelNotWritableAtTheStartHoldsReadsUntilItIs() async throws {
        let (channel, counter, bound) = try await makeChannel(writable: false)
        #expect(try await channel.testingEventLoop.executeInContext { bound.value.loop } != nil)
        let readsBefore = counter.reads.count
        try await channel.testingEventLoop.executeInContext { channel.read() }
        #expect(counter.reads.count == readsBefore)
        channel.isWritable = true
        try await channel.testingEventLoop.executeInContext {
            channel.pipeline.fireChannelWritabilityChanged()
        }
        #expect(counter.reads.count == readsBefore + 1)
        _ = try await closeAndStop(channel, bound)
    }

    /// The `write:` form: each state's messages written one at a time (no
    /// array), their buffers from the channel's allocator, in state order,
    /// flushed once per read; none for the initial state.
    @Test func theWriterFormWritesEachStatesMessagesInOrderWithTheChannelsAllocator() async throws {
        let channel = NIOAsyncTestingChannel()
        let flushes = ReadingWriter(reads: [])
        let handler = try await channel.testingEventLoop.executeInContext {
            let handler = SpinHandler(
                spin: sumSpin, event: { (number: Int) in number },
                write: { (state: SumState, replies: inout SpinReplies<ByteBuffer>) in
                    guard let reply = state.reply else { return }
                    for part in [reply, -reply] {
                        var buffer = replies.allocator.buffer(capacity: 8)
                        buffer.writeInteger(part)
                        replies.write(buffer)
                    }
                })
            try channel.pipeline.syncOperations.addHandlers([flushes, handler])
            return NIOLoopBound(handler, eventLoop: channel.eventLoop)
        }
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).get()
        await channel.testingEventLoop.run()
        #expect(try await channel.readOutbound(as: ByteBuffer.self) == nil)  // the initial state: nothing
        for number in 1...3 { try await channel.writeInbound(number) }
        var parts: [Int] = []
        while var buffer = try await channel.readOutbound(as: ByteBuffer.self) {
            let part = buffer.readInteger(as: Int.self)
            parts.append(try #require(part))
        }
        #expect(parts == [1, -1, 3, -3, 6, -6])
        #expect(flushes.flushes.count == 3)
        _ = try await closeAndStop(channel, handler)
    }

    /// `event:` may keep state across calls: it runs once per message, on
    /// the event loop, in read order, for one handler (one channel). Here a
    /// request arrives in parts (numbers, then a 0), as NIO decodes an HTTP
    /// request into a head, body parts and an end, and makes one event.
    @Test func eventKeepsPerConnectionDecodeStateAcrossCalls() async throws {
        final class Parts { var sum = 0 }
        let channel = NIOAsyncTestingChannel()
        let handler = try await channel.testingEventLoop.executeInContext {
            let parts = Parts()  // this connection's, touched on its event loop only
            let handler = SpinHandler(
                spin: sumSpin, event: { (part: Int) -> Int? in
                    guard part == 0 else {
                        parts.sum += part
                        return nil
                    }
                    defer { parts.sum = 0 }
                    return parts.sum
                },
                replies: { (state: SumState) in state.reply.map { [$0] } ?? [] })
            try channel.pipeline.syncOperations.addHandler(handler)
            return NIOLoopBound(handler, eventLoop: channel.eventLoop)
        }
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).get()
        await channel.testingEventLoop.run()
        for part in [1, 2, 0, 3, 4, 5, 0, 7, 0] { try await channel.writeInbound(part) }
        #expect(try await replies(3, from: channel) == [3, 15, 22])
        _ = try await closeAndStop(channel, handler)
    }

    /// A read that NIO makes from inside a write (the pipelining assist: a
    /// write that drains the socket lets the channel read again before the
    /// write returns) reaches the handler while its loop runs the slice that
    /// wrote: the message is queued and reduced in that run, after the
    /// state that wrote; replies stay in state order and are flushed once,
    /// when the outer read completes.
    @Test func aReadFromInsideAWriteIsReducedAfterTheStateThatWrote() async throws {
        let channel = NIOAsyncTestingChannel()
        let echo = ReadingWriter(reads: [10, 100])
        let handler = try await channel.testingEventLoop.executeInContext {
            let handler = SpinHandler(
                spin: sumSpin, event: { (number: Int) in number },
                replies: { (state: SumState) in state.reply.map { [$0] } ?? [] })
            try channel.pipeline.syncOperations.addHandlers([echo, handler])
            return NIOLoopBound(handler, eventLoop: channel.eventLoop)
        }
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).get()
        await channel.testingEventLoop.run()
        try await channel.writeInbound(1)
        #expect(try await replies(3, from: channel) == [1, 11, 111])
        #expect(echo.readsMade.count == 2)
        #expect(echo.flushes.count == 1, "flushes: \(echo.flushes.count)")
        let (report, _) = try await closeAndStop(channel, handler)
        #expect(report.reduced == 3)
    }

    /// Closes the channel and runs its event loop until the handler has
    /// stopped its loop (the handler asks for the stop itself); returns the
    /// stop's report. Every test ends with it: a channel never closed keeps
    /// its handler's loop, as any NIO channel keeps its handlers.
    func closeAndStop<OutboundOut>(
        _ channel: NIOAsyncTestingChannel, _ bound: NIOLoopBound<SpinHandler<SumState, Int, Int, OutboundOut>>
    ) async throws -> (StopReport, SpinLoop<SumState, Int>) {
        let loop = try #require(try await channel.testingEventLoop.executeInContext { bound.value.loop })
        try await channel.close().get()
        // The stop's grace period ends on another thread, and its last
        // slice runs on the testing event loop: run it until the loop has
        // stopped.
        let deadline = ContinuousClock.now + hangGuard
        while !loop.isStopped, ContinuousClock.now < deadline {
            await channel.testingEventLoop.run()
            if !loop.isStopped { try? await Task.sleep(for: .milliseconds(1)) }
        }
        #expect(loop.isStopped, "the handler's loop did not stop with its channel")
        // Stopped: `stop()` returns the same report at once.
        return (await loop.stop(), loop)
    }

    /// Hears a loop's failure to start (the hook beside `errorCaught`).
    final class StartFailures: SpinObserver, Sendable {
        typealias State = SumState
        typealias Event = Int
        let errors = Recorder<SpinExecutorError>()
        func loopFailedToStart(_ error: SpinExecutorError) { errors.append(error) }
    }

    @Test func aLoopThatCannotStartSendsItsErrorDownThePipelineAndClosesTheChannel() async throws {
        var invalid = SpinOptions()
        invalid.maxBatch = 0
        let options = invalid
        let failures = StartFailures()
        let channel = NIOAsyncTestingChannel()
        let bound = try await channel.testingEventLoop.executeInContext {
            let handler = SpinHandler(
                spin: sumSpin.observed(by: failures), options: options, event: { (number: Int) in number },
                replies: { (state: SumState) in state.reply.map { [$0] } ?? [] })
            try channel.pipeline.syncOperations.addHandler(handler)
            return NIOLoopBound(handler, eventLoop: channel.eventLoop)
        }
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).get()
        await channel.testingEventLoop.run()
        let expected = SpinExecutorError.invalidOptions(reason: "maxBatch must be at least 1 (got 0)")
        await #expect(throws: expected) {
            try await channel.throwIfErrorCaught()
        }
        // The spin's observers hear it too, where the handler starts the loop.
        #expect(failures.errors.values == [expected])
        #expect(!channel.isActive)
        #expect(try await channel.testingEventLoop.executeInContext { bound.value.loop == nil })
    }

    /// Records the effect runs that finished (the writer feedback's, on an
    /// observed loop).
    final class FinishedRuns: SpinObserver, Sendable {
        typealias State = SumState
        typealias Event = Int
        let runs = Recorder<EffectRun>()
        func effectFinished(_ run: EffectRun) { runs.append(run) }
    }

    @Test func anObservedLoopRepliesToEachStateInOrderThroughTheObservedPath() async throws {
        // With an observer the engine runs the writer feedback through its
        // general path (each run reported), not the direct call it makes
        // for an unobserved loop: the replies are the same.
        let observer = FinishedRuns()
        let (channel, _, bound) = try await makeChannel(spin: sumSpin.observed(by: observer))
        for number in 1...5 { try await channel.writeInbound(number) }
        #expect(try await replies(5, from: channel) == [1, 3, 6, 10, 15])
        // One run per state: the initial state's and the five reduced.
        #expect(observer.runs.count == 6)
        _ = try await closeAndStop(channel, bound)
    }

    @Test func theLoopStopsWhenTheChannelCloses() async throws {
        let (channel, _, bound) = try await makeChannel()
        for number in 1...3 { try await channel.writeInbound(number) }
        _ = try await replies(3, from: channel)
        let (report, loop) = try await closeAndStop(channel, bound)
        #expect(report.reduced == 3)
        #expect(loop.emit(4) == .stopped)
    }

    /// A bounded `.block` queue of 2, which 10 messages read in one go
    /// overflow.
    var blockingOptions: SpinOptions {
        var options = SpinOptions()
        options.queue = .bounded(capacity: 2, overflow: .block)
        return options
    }

    @Test func aFullBlockQueueHoldsMessagesInOrderAndStopsReadingWithoutBlockingTheEventLoop() async throws {
        let (channel, counter, bound) = try await makeChannel(options: blockingOptions)
        // The loop runs on this event loop, which does not run while the
        // messages are read: an emit that waited for room would never return.
        for number in 1...10 { try await channel.writeInbound(number) }
        let readsBefore = counter.reads.count
        try await channel.testingEventLoop.executeInContext { channel.read() }
        #expect(counter.reads.count == readsBefore, "no read while messages are held")
        #expect(try await replies(10, from: channel) == (1...10).map { $0 * ($0 + 1) / 2 })
        #expect(counter.reads.count == readsBefore + 1, "the held-back read goes on once every message is in the loop")
        _ = try await closeAndStop(channel, bound)
    }

    @Test func messagesHeldForAFullQueueAreReducedWhenTheChannelCloses() async throws {
        let (channel, _, bound) = try await makeChannel(options: blockingOptions)
        for number in 1...10 { try await channel.writeInbound(number) }
        let (report, loop) = try await closeAndStop(channel, bound)
        #expect(report.reduced == 10)
        #expect(loop.state.sum == 55)
    }
}
#endif
