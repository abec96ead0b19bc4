import Foundation
import NIOCore

/// Opens a tunnel through an HTTP proxy with `CONNECT` to an address the guard already allowed,
/// so that behind the address guard a proxy still carries the traffic but never chooses where
/// it goes: it is told an address, not a name it would resolve itself.
final class ProxyTunnelHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The handler's name in the pipeline, to take it away once the tunnel is open.
    static let name = "webimage.proxy-tunnel"

    private let request: String
    /// Completed at most once in effect: NIO keeps a promise's first result and ignores later ones.
    private let established: EventLoopPromise<Void>
    private var received = ByteBuffer()
    private var isOpen = false

    /// A handler that asks for a tunnel to `target` (`address:port`), with the proxy's
    /// credentials when the proxy URL carries them; `established` succeeds on a 2xx answer.
    init(target: String, proxy: URL, established: EventLoopPromise<Void>) {
        var lines = ["CONNECT \(target) HTTP/1.1", "Host: \(target)"]
        if let authorization = ProxySettings.authorization(for: proxy) { lines.append("Proxy-Authorization: \(authorization)") }
        request = lines.joined(separator: "\r\n") + "\r\n\r\n"
        self.established = established
    }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: request)), promise: nil)
        context.fireChannelActive()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive {
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: request)), promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        received.writeBuffer(&bytes)
        guard !isOpen else { return }
        let view = received.readableBytesView
        guard let end = view.firstRange(of: Array("\r\n\r\n".utf8)) else {
            if received.readableBytes > 16_384 { fail(context, "the proxy's answer to CONNECT is too long") }
            return
        }
        let head = String(decoding: view[view.startIndex..<end.lowerBound], as: UTF8.self)
        received.moveReaderIndex(forwardBy: end.upperBound - view.startIndex)
        let status = head.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) }
        guard let status, (200..<300).contains(status) else {
            return fail(context, "the proxy answered CONNECT with \(head.prefix { $0 != "\r" })")
        }
        isOpen = true
        established.succeed(())
    }

    /// Bytes that came after the proxy's answer belong to the tunnel: they go on as the handler
    /// leaves the pipeline.
    func handlerRemoved(context: ChannelHandlerContext) {
        if received.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(received)) }
        established.fail(WebImageError(.cannotConnect, "the proxy tunnel closed before it opened"))
    }

    func channelInactive(context: ChannelHandlerContext) {
        established.fail(WebImageError(.cannotConnect, "the proxy closed the connection before answering CONNECT"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        established.fail(error)
        context.close(promise: nil)
    }

    private func fail(_ context: ChannelHandlerContext, _ reason: String) {
        established.fail(WebImageError(.cannotConnect, reason))
        context.close(promise: nil)
    }

}

@available(*, unavailable)
extension ProxyTunnelHandler: Sendable {}
