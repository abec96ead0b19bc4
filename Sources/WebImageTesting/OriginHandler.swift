import NIOCore
import NIOHTTP1

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Serves one connection of the ``OriginServer``: records each request and sends the scripted
/// response the way its ``OriginResponse/Delivery`` says. Runs only on its channel's event loop.
final class OriginHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private static let generatedChunkSize = 64 * 1024

    private let server: OriginServer
    private let connectionID: Int
    private var head: HTTPRequestHead?
    private var requestBody: [UInt8] = []
    private var pending: OriginRequest?
    private var sentBodyBytes: Int64 = 0
    private var isActive = true

    /// An HTTP/2 stream rather than a connection: the connection's own events are recorded by
    /// the server, and a stream that closes reports only an abandoned request.
    private let isStream: Bool

    init(server: OriginServer, connectionID: Int, isStream: Bool = false) {
        self.server = server
        self.connectionID = connectionID
        self.isStream = isStream
    }

    /// A handler added after TLS negotiation joins a connection that is already active.
    func handlerAdded(context: ChannelHandlerContext) {
        if !isStream, context.channel.isActive { server.record(.connectionOpened(connectionID: connectionID)) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if !isStream { server.record(.connectionOpened(connectionID: connectionID)) }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        isActive = false
        if !isStream {
            server.connectionClosed(connectionID, pendingRequest: pending)
        } else if let pending {
            server.record(.connectionClosed(connectionID: connectionID, pendingRequest: pending))
        }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let requestHead):
            head = requestHead
            requestBody = []
        case .body(let part):
            requestBody.append(contentsOf: part.readableBytesView)
        case .end:
            guard let requestHead = head else { return }
            head = nil
            let request = server.recordRequest(requestHead, body: requestBody, connectionID: connectionID)
            pending = request
            sentBodyBytes = 0
            let plan = ResponsePlan(response: server.response(for: request), request: request)
            guard plan.delivery != .neverRespond else { return }
            if case .held(let hold) = plan.delivery {
                let loopBound = NIOLoopBound((self, context, plan, request), eventLoop: context.eventLoop)
                hold.whenReleased {
                    loopBound.eventLoop.execute {
                        let (handler, context, plan, request) = loopBound.value
                        handler.send(plan, request: request, context: context)
                    }
                }
            } else if plan.headerDelay > .zero {
                context.eventLoop.assumeIsolated().scheduleTask(in: .init(plan.headerDelay)) {
                    self.send(plan, request: request, context: context)
                }
            } else {
                send(plan, request: request, context: context)
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func send(_ plan: ResponsePlan, request: OriginRequest, context: ChannelHandlerContext) {
        guard isActive else { return }
        let status = HTTPResponseStatus(statusCode: plan.status)
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: plan.headers))), promise: nil)
        let body = plan.sendsBody ? plan.body : []
        switch plan.delivery {
        case .whole, .neverRespond, .held:
            writeBody(body[...], context: context)
            finish(plan, request: request, context: context)
        case .drip(let bytes, let interval):
            drip(body[...], bytes: max(1, bytes), interval: interval, plan: plan, request: request, context: context)
        case .cutShort(let after):
            writeBody(body.prefix(after), context: context)
            context.close(promise: nil)
        case .reset(let after):
            writeBody(body.prefix(after), context: context)
            reset(context: context)
        case .stall(let after):
            writeBody(body.prefix(after), context: context)
        case .generated(let byteCount, _):
            pump(remaining: plan.sendsBody ? byteCount : 0, plan: plan, request: request, context: context)
        }
    }

    private func writeBody(_ bytes: ArraySlice<UInt8>, context: ChannelHandlerContext) {
        if !bytes.isEmpty {
            sentBodyBytes += Int64(bytes.count)
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: bytes)))), promise: nil)
        }
        context.flush()
    }

    private func finish(_ plan: ResponsePlan, request: OriginRequest, context: ChannelHandlerContext) {
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: promise)
        promise.futureResult.assumeIsolated().whenSuccess {
            self.pending = nil
            self.server.record(.responseFinished(request, status: plan.status, bodyBytes: self.sentBodyBytes))
            if !plan.keepAlive { context.close(promise: nil) }
        }
    }

    private func drip(
        _ rest: ArraySlice<UInt8>, bytes: Int, interval: Duration,
        plan: ResponsePlan, request: OriginRequest, context: ChannelHandlerContext
    ) {
        guard isActive else { return }
        writeBody(rest.prefix(bytes), context: context)
        let remaining = rest.dropFirst(bytes)
        guard !remaining.isEmpty else {
            finish(plan, request: request, context: context)
            return
        }
        context.eventLoop.assumeIsolated().scheduleTask(in: .init(interval)) {
            self.drip(remaining, bytes: bytes, interval: interval, plan: plan, request: request, context: context)
        }
    }

    /// Writes a generated body a chunk at a time, each after the previous one reached the socket,
    /// so a client that stops reading holds the server back instead of filling its memory.
    private func pump(remaining: Int64, plan: ResponsePlan, request: OriginRequest, context: ChannelHandlerContext) {
        guard isActive else { return }
        guard remaining > 0 else {
            finish(plan, request: request, context: context)
            return
        }
        let count = Int(min(Int64(Self.generatedChunkSize), remaining))
        var buffer = context.channel.allocator.buffer(capacity: count)
        let start = sentBodyBytes
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
            for index in 0..<count { pointer[index] = OriginResponse.generatedByte(at: start + Int64(index)) }
            return count
        }
        sentBodyBytes += Int64(count)
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: promise)
        promise.futureResult.assumeIsolated().whenSuccess {
            self.pump(remaining: remaining - Int64(count), plan: plan, request: request, context: context)
        }
    }

    /// Closes with SO_LINGER 0, which makes the kernel send RST instead of FIN.
    private func reset(context: ChannelHandlerContext) {
        guard let provider = context.channel as? any SocketOptionProvider else {
            context.close(promise: nil)
            return
        }
        provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }
}

extension OriginResponse {
    /// The byte at `offset` of a ``Delivery/generated(byteCount:declaresLength:)`` body, so that a
    /// test can check what it received without the server keeping the body.
    public static func generatedByte(at offset: Int64) -> UInt8 {
        UInt8(truncatingIfNeeded: offset % 251)
    }
}
