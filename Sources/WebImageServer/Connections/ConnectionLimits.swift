import NIOCore
import NIOHTTP1
import WebImage

/// imgproxy's `IMGPROXY_MAX_CLIENTS` (Go's `netutil.LimitListener` in `server/server.go`): once
/// that many client connections are open the server stops accepting, so further clients wait in
/// the kernel's backlog rather than being refused, and accepting resumes when one closes. The
/// decisions are this value's; ``ConnectionLimiter`` carries them out on the listening channel.
struct ConnectionCount: Equatable {
    enum Action: Equatable {
        case none
        case stopAccepting
        case resumeAccepting
    }

    let maximum: Int
    private(set) var open = 0
    private(set) var accepting = true

    init(maximum: Int) { self.maximum = maximum }

    mutating func opened() -> Action {
        open += 1
        guard accepting, open >= maximum else { return .none }
        accepting = false
        return .stopAccepting
    }

    mutating func closed() -> Action {
        open -= 1
        guard !accepting, open < maximum else { return .none }
        accepting = true
        return .resumeAccepting
    }
}

/// Counts client connections and pauses the listening channel's accepting at the limit. A batch
/// of connections the kernel had already queued may be accepted in the read that reaches the
/// limit (NIO accepts up to its `maxMessagesPerRead` at once), so the limit can be passed by
/// that many, where Go's listener is exact.
final class ConnectionLimiter: Sendable {
    // Locked: the count changes on every connection's event loop, and the listening channel's
    // switch must be flipped in the order the count decided it.
    private let state: Locked<(count: ConnectionCount, listener: (any Channel)?)>

    init(maximum: Int) { state = Locked((ConnectionCount(maximum: maximum), nil)) }

    /// Whether the server accepts new connections now.
    var isAccepting: Bool { state.withLock { $0.count.accepting } }

    /// Whether the listening channel reads new connections now (its `autoRead`); nil before it is bound.
    func listenerReads() async throws -> Bool? {
        guard let listener = state.withLock({ $0.listener }) else { return nil }
        return try await listener.getOption(ChannelOptions.autoRead).get()
    }

    /// The listening channel, once bound.
    func listening(on channel: any Channel) {
        state.withLock { $0.listener = channel }
    }

    /// Counts `child` until it closes.
    func opened(_ child: any Channel) {
        state.withLock { state in Self.perform(state.count.opened(), on: state.listener) }
        child.closeFuture.whenComplete { [self] _ in
            state.withLock { state in Self.perform(state.count.closed(), on: state.listener) }
        }
    }

    private static func perform(_ action: ConnectionCount.Action, on listener: (any Channel)?) {
        switch action {
        case .none: break
        case .stopAccepting: listener?.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
        case .resumeAccepting: listener?.setOption(ChannelOptions.autoRead, value: true).whenFailure { _ in }
        }
    }
}

/// imgproxy's `IMGPROXY_READ_REQUEST_TIMEOUT` and `IMGPROXY_WRITE_RESPONSE_TIMEOUT` (Go's
/// `http.Server.ReadTimeout`, and the write deadline `server/responsewriter/writer.go` sets): a
/// request must arrive whole within the one, from its first byte to its end, and a response must
/// be handed to the socket whole within the other, from its head to its last byte; past either the
/// connection is closed, so that a client sending or reading slowly cannot hold it. The idle
/// timeout covers the time between requests.
///
/// Two handlers share one state, on the connection's event loop: ``bytesHandler`` before the HTTP
/// decoder, which starts the read deadline at a request's first byte (so a slowly sent header
/// counts), and ``partsHandler`` after it, which ends it at the request's end and times the response.
final class ConnectionDeadlines {
    let readTimeout: TimeAmount
    let writeTimeout: TimeAmount
    private var reading: Scheduled<Void>?
    private var writing: Scheduled<Void>?

    init(readTimeout: TimeAmount, writeTimeout: TimeAmount) {
        self.readTimeout = readTimeout
        self.writeTimeout = writeTimeout
    }

    var bytesHandler: BytesHandler { BytesHandler(deadlines: self) }
    var partsHandler: PartsHandler { PartsHandler(deadlines: self) }

    fileprivate func requestBegan(_ context: ChannelHandlerContext) {
        guard reading == nil else { return }
        reading = Self.closing(context, after: readTimeout)
    }

    fileprivate func requestEnded() {
        reading?.cancel()
        reading = nil
    }

    fileprivate func responseBegan(_ context: ChannelHandlerContext) {
        writing?.cancel()
        writing = Self.closing(context, after: writeTimeout)
    }

    fileprivate func responseWritten() {
        writing?.cancel()
        writing = nil
    }

    fileprivate func stop() {
        requestEnded()
        responseWritten()
    }

    private static func closing(_ context: ChannelHandlerContext, after timeout: TimeAmount) -> Scheduled<Void> {
        let channel = context.channel
        return context.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
    }

    /// Before the decoder: a request's first bytes start its read deadline.
    final class BytesHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        let deadlines: ConnectionDeadlines

        init(deadlines: ConnectionDeadlines) { self.deadlines = deadlines }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            deadlines.requestBegan(context)
            context.fireChannelRead(data)
        }

        func channelInactive(context: ChannelHandlerContext) {
            deadlines.stop()
            context.fireChannelInactive()
        }
    }

    /// After the decoder: a request's end stops the read deadline; a response's head starts the
    /// write deadline, and its end, once handed to the socket, stops it.
    final class PartsHandler: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias InboundOut = HTTPServerRequestPart
        typealias OutboundIn = HTTPServerResponsePart
        typealias OutboundOut = HTTPServerResponsePart
        let deadlines: ConnectionDeadlines

        init(deadlines: ConnectionDeadlines) { self.deadlines = deadlines }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .end = unwrapInboundIn(data) { deadlines.requestEnded() }
            context.fireChannelRead(data)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            switch unwrapOutboundIn(data) {
            case .head:
                deadlines.responseBegan(context)
                context.write(data, promise: promise)
            case .end:
                let written = promise ?? context.eventLoop.makePromise()
                let deadlines = NIOLoopBound(deadlines, eventLoop: context.eventLoop)
                written.futureResult.whenComplete { _ in deadlines.value.responseWritten() }
                context.write(data, promise: written)
            case .body:
                context.write(data, promise: promise)
            }
        }
    }
}
