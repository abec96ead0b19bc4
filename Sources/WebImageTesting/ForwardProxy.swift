import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A small HTTP forward proxy on 127.0.0.1 with an ephemeral port, for testing code that must
/// go through one (`HTTP_PROXY`, `--proxy`). It takes `CONNECT host:port` (for HTTPS) and
/// absolute-form requests (`GET http://host:port/path`, for plain HTTP), records each request,
/// and relays bytes both ways; an absolute-form request is sent on in origin form with
/// `Connection: close`, one per connection. Other request targets get 501.
///
/// ```swift
/// let proxy = try await ForwardProxy.start()
/// // ... HTTP_PROXY=http://127.0.0.1:\(proxy.port) ...
/// #expect(proxy.requests == ["GET http://127.0.0.1:8080/a.png"])
/// ```
public final class ForwardProxy: Sendable {
    /// The port the proxy listens on.
    public let port: Int
    private let listener: any Channel
    private let log = NIOLockedValueBox<[String]>([])
    /// The `Proxy-Authorization` value every request must carry, or nil to take any request.
    private let requiredAuthorization: String?

    private init(listener: any Channel, requiredAuthorization: String?) {
        self.listener = listener
        self.requiredAuthorization = requiredAuthorization
        port = listener.localAddress?.port ?? 0
    }

    /// Starts a proxy on 127.0.0.1. With `requiredAuthorization` (a whole header value, such as
    /// `Basic dXNlcjpwYXNz`), requests without it are answered 407.
    public static func start(requiredAuthorization: String? = nil) async throws -> ForwardProxy {
        let box = NIOLockedValueBox<ForwardProxy?>(nil)
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                guard let proxy = box.withLockedValue({ $0 }) else { return channel.close() }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ProxyRequestHandler(proxy: proxy))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let proxy = ForwardProxy(listener: listener, requiredAuthorization: requiredAuthorization)
        box.withLockedValue { $0 = proxy }
        return proxy
    }

    /// `http://127.0.0.1:PORT`.
    public var url: String { "http://127.0.0.1:\(port)" }

    /// Every request received, as `METHOD TARGET` (`CONNECT host:443`), in order; refused ones
    /// (407, 501) included.
    public var requests: [String] {
        log.withLockedValue { $0 }
    }

    /// Stops listening.
    public func shutdown() async throws {
        try await listener.close()
    }

    func record(_ line: String) {
        log.withLockedValue { $0.append(line) }
    }

    func isAuthorized(_ head: ProxyRequestHead) -> Bool {
        guard let requiredAuthorization else { return true }
        return head.header("Proxy-Authorization") == requiredAuthorization
    }
}

/// A request head as the proxy sees it: the method, the target and the header lines, as text.
struct ProxyRequestHead {
    let method: String
    let target: String
    let headerLines: [Substring]

    init?(_ text: String) {
        let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count == 3 else { return nil }
        method = String(parts[0])
        target = String(parts[1])
        headerLines = Array(lines.dropFirst()).filter { !$0.isEmpty }
    }

    func header(_ name: String) -> String? {
        headerLines.lazy.compactMap { line -> String? in
            guard let colon = line.firstIndex(of: ":"), line[..<colon].lowercased() == name.lowercased() else { return nil }
            return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }.first
    }

    /// Host and port of a CONNECT's target (`host:port`, `[::1]:port`) or of an absolute-form
    /// `http:` target (port 80 when it has none).
    var destination: (host: String, port: Int)? {
        if method == "CONNECT" {
            guard let colon = target.lastIndex(of: ":"), let port = Int(target[target.index(after: colon)...]) else { return nil }
            return (String(target[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port)
        }
        guard let url = URL(string: target), url.scheme?.lowercased() == "http", let host = url.host else { return nil }
        return (host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), url.port ?? 80)
    }

    /// An absolute-form request as the origin takes it: origin form, and `Connection: close` so
    /// that the origin ends the relayed connection after its answer.
    var originForm: String? {
        guard method != "CONNECT", let url = URL(string: target), let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return nil }
        let path =
            (components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath)
            + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        let kept = headerLines.filter { line in
            let name = line.prefix { $0 != ":" }.lowercased()
            return name != "connection" && name != "proxy-authorization" && name != "proxy-connection"
        }
        return (["\(method) \(path) HTTP/1.1"] + kept.map(String.init) + ["Connection: close", "", ""]).joined(separator: "\r\n")
    }
}

/// Reads one CONNECT or absolute-form request (without a body), connects where it asks, and relays the rest.
private final class ProxyRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let proxy: ForwardProxy
    private var buffered = ByteBuffer()
    private var headRead = false

    init(proxy: ForwardProxy) {
        self.proxy = proxy
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        buffered.writeBuffer(&bytes)
        guard !headRead, let end = buffered.readableBytesView.firstRange(of: Array("\r\n\r\n".utf8)) else { return }
        headRead = true
        let length = end.upperBound - buffered.readerIndex
        let text = buffered.readString(length: length) ?? ""
        guard let head = ProxyRequestHead(text) else { return answer(context, "400 Bad Request") }
        proxy.record("\(head.method) \(head.target)")
        guard let destination = head.destination else { return answer(context, "501 Not Implemented") }
        guard proxy.isAuthorized(head) else { return answer(context, "407 Proxy Authentication Required") }
        let client = context.channel
        ClientBootstrap(group: context.eventLoop).connect(host: destination.host, port: destination.port)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .failure:
                    self.answer(context, "502 Bad Gateway")
                case .success(let upstream):
                    var opening = self.buffered
                    if let request = head.originForm {
                        opening = ByteBuffer(string: request)
                    } else {
                        client.writeAndFlush(ByteBuffer(string: "HTTP/1.1 200 Connection Established\r\n\r\n"), promise: nil)
                    }
                    Self.relay(client, upstream, opening: opening)
                    context.pipeline.syncOperations.removeHandler(self, promise: nil)
                }
            }
    }

    private func answer(_ context: ChannelHandlerContext, _ status: String) {
        let response = "HTTP/1.1 \(status)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: response))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    private static func relay(_ client: any Channel, _ upstream: any Channel, opening: ByteBuffer) {
        try? client.pipeline.syncOperations.addHandler(RelayHandler(to: upstream))
        try? upstream.pipeline.syncOperations.addHandler(RelayHandler(to: client))
        upstream.writeAndFlush(opening, promise: nil)
    }
}

/// Writes what one connection reads to the other, and closes it with the first.
private final class RelayHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let other: any Channel

    init(to other: any Channel) {
        self.other = other
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        other.write(unwrapInboundIn(data), promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        other.flush()
    }

    /// The other side closes once everything written to it has gone out.
    func channelInactive(context: ChannelHandlerContext) {
        let other = other
        other.writeAndFlush(ByteBuffer()).whenComplete { _ in other.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
