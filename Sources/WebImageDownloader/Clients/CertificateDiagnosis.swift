import Foundation
import NIOCore
import NIOPosix
import NIOSOCKS
import NIOSSL
import NIOTLS

/// Says why a server's certificate did not verify. BoringSSL reports every verification failure
/// as `CERTIFICATE_VERIFY_FAILED`, and NIOSSL keeps no detail, so on such a failure the
/// downloader makes one more handshake to the same host, by the same way out (directly, through
/// the address guard, or tunnelled through the proxy), without verifying, and reads the leaf
/// certificate's validity dates: expired, not yet valid, or else signed by no authority the
/// downloader trusts. A name mismatch needs no second look: NIOSSL names it.
enum CertificateDiagnosis {
    /// How the second handshake reaches the host.
    enum Route {
        case direct
        /// Through a SOCKS5 listener (the address guard) at this address and port.
        case socks(host: String, port: Int)
        /// Through an HTTP proxy, with `CONNECT`.
        case tunnel(proxy: URL)
    }

    /// The reason, in words, for a failure to verify `host`'s certificate; nil when the second
    /// handshake could not be made either.
    static func explain(host: String, port: Int, route: Route, timeout: TimeAmount, now: Date = Date()) async -> String? {
        guard let leaf = try? await peerCertificate(host: host, port: port, route: route, timeout: timeout) else { return nil }
        let notAfter = Date(timeIntervalSince1970: TimeInterval(leaf.notValidAfter))
        let notBefore = Date(timeIntervalSince1970: TimeInterval(leaf.notValidBefore))
        if notAfter < now { return "the certificate of \(host) expired on \(Self.format(notAfter)) (expired)" }
        if notBefore > now { return "the certificate of \(host) is valid only from \(Self.format(notBefore)) (not yet valid)" }
        return "the certificate of \(host) is not signed by a trusted authority (untrusted issuer)"
    }

    /// The name-mismatch reason, from NIOSSL's own error.
    static func nameMismatch(host: String) -> String {
        "the certificate of \(host) does not name it (name mismatch)"
    }

    private static func format(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    private static func peerCertificate(host: String, port: Int, route: Route, timeout: TimeAmount) async throws -> NIOSSLCertificate {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        let context = try NIOSSLContext(configuration: configuration)
        let eventLoop = MultiThreadedEventLoopGroup.singleton.any()
        let handshake = eventLoop.makePromise(of: NIOSSLCertificate.self)
        let bootstrap = ClientBootstrap(group: eventLoop).connectTimeout(timeout)
        let channel: any Channel
        switch route {
        case .direct:
            channel = try await bootstrap.connect(host: host, port: port).get()
        case .socks(let socksHost, let socksPort):
            let established = eventLoop.makePromise(of: Void.self)
            channel = try await bootstrap.channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(SOCKSClientHandler(targetAddress: .domain(host, port: port)))
                    try channel.pipeline.syncOperations.addHandler(SOCKSEstablished(established))
                }
            }.connect(host: socksHost, port: socksPort).get()
            try await established.futureResult.get()
        case .tunnel(let proxy):
            let established = eventLoop.makePromise(of: Void.self)
            channel = try await bootstrap.channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ProxyTunnelHandler(target: "\(host):\(port)", proxy: proxy, established: established), name: ProxyTunnelHandler.name
                    )
                }
            }.connect(host: proxy.host ?? "", port: proxy.port ?? 1080).get()
            try await established.futureResult.get()
            // The tunnel is open: the handler that asked for it would keep the server's bytes
            // from the TLS handler, and the handshake would wait until the timeout.
            try await channel.pipeline.removeHandler(name: ProxyTunnelHandler.name).get()
        }
        defer { channel.close(promise: nil) }
        try await channel.eventLoop.submit {
            let handler = try NIOSSLClientHandler(context: context, serverHostname: IPAddress(host) == nil ? host : nil)
            try channel.pipeline.syncOperations.addHandler(handler)
            try channel.pipeline.syncOperations.addHandler(HandshakeWatcher(handshake, handler: handler))
        }.get()
        let scheduled = eventLoop.scheduleTask(in: timeout) { handshake.fail(ChannelError.connectTimeout(timeout)) }
        defer { scheduled.cancel() }
        return try await handshake.futureResult.get()
    }
}

/// Completes a promise when the SOCKS handshake is done.
private final class SOCKSEstablished: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let promise: EventLoopPromise<Void>

    init(_ promise: EventLoopPromise<Void>) {
        self.promise = promise
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is SOCKSProxyEstablishedEvent { promise.succeed(()) }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(ChannelError.eof)
    }
}

/// Hands over the peer's leaf certificate once the TLS handshake completes.
private final class HandshakeWatcher: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let promise: EventLoopPromise<NIOSSLCertificate>
    private let handler: NIOSSLClientHandler

    init(_ promise: EventLoopPromise<NIOSSLCertificate>, handler: NIOSSLClientHandler) {
        self.promise = promise
        self.handler = handler
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted? = event as? TLSUserEvent {
            if let certificate = handler.peerCertificate {
                promise.succeed(certificate)
            } else {
                promise.fail(NIOSSLError.noCertificateToValidate)
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(ChannelError.eof)
    }
}
