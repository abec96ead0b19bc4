import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Closes a connection whose client has closed its side. Hummingbird accepts half-closed
/// connections, so a client that went away while its request waited was only an end of input
/// nobody read, and the request went on; closed, the connection cancels the request's work
/// (``withDeadline(_:error:closed:_:)``). An HTTP client that half-closes and still
/// waits for its answer is not served: no browser, CDN or HTTP library does that.
final class ClientGoneHandler: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    // Reads pass through untouched; only the end of input is acted on.
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}

/// Hummingbird's HTTP/1 channel with HTTP/1.0's connection rule: a 1.0 request without
/// `Connection: keep-alive` is marked `Connection: close` as it is decoded (HTTP types, into which
/// Hummingbird converts requests, have no version), so that it is answered with `Connection:
/// close` and its connection closed, rather than held open as an HTTP/1.1 one would be.
struct ProxyHTTP1Channel: ServerChildChannel {
    let inner: HTTP1Channel
    /// Counts the connection against `IMGPROXY_MAX_CLIENTS`; nil for no limit.
    let limiter: ConnectionLimiter?
    let readTimeout: TimeAmount
    let writeTimeout: TimeAmount
    /// How long an idle connection stays open once the server drains (``ConnectionDrain``).
    let drainGrace: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1Channel.Value> {
        limiter?.opened(channel)
        return inner.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let operations = channel.pipeline.syncOperations
            let decoder = try operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            let deadlines = ConnectionDeadlines(readTimeout: readTimeout, writeTimeout: writeTimeout)
            try operations.addHandler(deadlines.bytesHandler, position: .before(decoder))
            try operations.addHandler(deadlines.partsHandler, position: .after(decoder))
            try operations.addHandler(HTTP10ConnectionHandler(), position: .after(decoder))
            try operations.addHandler(RequestArrivalHandler(), position: .after(decoder))
            try operations.addHandler(ConnectionDrainHandler(grace: drainGrace), position: .after(decoder))
            return value
        }
    }

    func handle(value: HTTP1Channel.Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// Stamps each request head with the moment it was read off the connection (the monotonic clock's
/// nanoseconds, as ``HeaderName/arrival``), so that the access line's `ms` counts the time a
/// request waited before its handler ran (a busy cooperative pool, a request pipelined behind
/// another), which a clock started in the middleware missed: a request that waited 10 s showed 4.
final class RequestArrivalHandler: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else { return context.fireChannelRead(data) }
        head.headers.replaceOrAdd(name: "X-Webimage-Arrival", value: String(DispatchTime.now().uptimeNanoseconds))
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }
}

/// Marks an HTTP/1.0 request head without keep-alive `Connection: close`.
final class HTTP10ConnectionHandler: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data), head.version == .http1_0, !head.isKeepAlive else {
            return context.fireChannelRead(data)
        }
        head.headers.replaceOrAdd(name: "Connection", value: "close")
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }
}
