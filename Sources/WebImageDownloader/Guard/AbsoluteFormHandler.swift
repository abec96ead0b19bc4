import Foundation
import NIOCore
import NIOHTTP1

/// Rewrites a client's requests, decoded from its connection, into what an HTTP proxy takes for
/// plain HTTP: the target in absolute form (`GET http://host:port/path`, RFC 9112 3.2.2) and the
/// proxy's credentials, then hands them on to be encoded onto the proxy's connection.
///
/// The client (AsyncHTTPClient, talking to the address guard as to a SOCKS proxy) sends
/// origin-form targets: it believes it is connected to the origin.
final class AbsoluteFormHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPClientRequestPart

    /// Where the requests go and through which proxy.
    struct Settings: Sendable {
        /// The origin's `host[:port]` (the port left out when it is 80), the name as the client gave it.
        let authority: String
        /// The proxy, with its credentials in the URL's user and password when it needs them.
        let proxy: URL
    }

    private let origin: String
    private let authorization: String?

    init(_ settings: Settings) {
        origin = "http://" + settings.authority
        authorization = ProxySettings.authorization(for: settings.proxy)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(var head):
            head.uri = absolute(head.uri)
            head.headers.remove(name: "Proxy-Authorization")
            if let authorization { head.headers.add(name: "Proxy-Authorization", value: authorization) }
            context.fireChannelRead(wrapInboundOut(.head(head)))
        case .body(let bytes):
            context.fireChannelRead(wrapInboundOut(.body(.byteBuffer(bytes))))
        case .end(let trailers):
            context.fireChannelRead(wrapInboundOut(.end(trailers)))
        }
    }

    /// An origin-form target (`/path?query`) prefixed with the origin; any other form (`*`, or
    /// one already absolute) as it came.
    private func absolute(_ target: String) -> String {
        target.hasPrefix("/") ? origin + target : target
    }
}

@available(*, unavailable)
extension AbsoluteFormHandler: Sendable {}
