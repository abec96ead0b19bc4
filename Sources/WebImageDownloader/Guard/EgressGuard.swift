import Foundation
import NIOCore
import NIOPosix
import NIOSOCKS

/// The address guard: an in-process SOCKS5 listener on a loopback address that the downloader's HTTP
/// clients use as their proxy, so that every connection they open (the first request's, each
/// redirect hop's, each new pooled connection's) is made here, after DNS, to an address the
/// ``AddressPolicy`` allowed.
///
/// Why a SOCKS listener: AsyncHTTPClient has no resolver or connect hook, but it does speak
/// SOCKS5 and sends the host name, not an address, to the proxy. Resolving here, judging every
/// address, and connecting only to an allowed one means DNS rebinding (a name that resolves to
/// a public address for a check and to 127.0.0.1 for the connection) and redirects to internal
/// addresses cannot pass, while AsyncHTTPClient keeps its TLS (end to end: the certificate is
/// still checked against the real host name), HTTP/2 and pooling. The price is a relay of every
/// byte through two more loopback sockets, on the same event loop; see `docs/benchmarks.md`.
///
/// The listener serves only the downloader that made it: a connection from any other local
/// process is closed before the handshake (``LocalPeer``), so the guard is no open proxy for
/// other users of the machine.
///
/// It listens on a random address of 127.0.0.0/8 rather than 127.0.0.1: NIOSSL accepts a
/// certificate whose IP address entry matches the socket's peer, whatever the host name, and
/// through the guard that peer is the guard. A certificate made for 127.0.0.1 (a development CA
/// makes those) would otherwise pass for any host; one for a random 127.x.y.z will not exist.
final class EgressGuard: Sendable {
    /// The loopback address and port the guard listens on.
    let host: String
    let port: Int
    let policy: AddressPolicy
    /// The proxies connections are tunnelled through (with `CONNECT` to the allowed address).
    private let upstream: ProxySettings?
    private let resolver: any HostResolver
    private let connectTimeout: TimeAmount
    private let listener: any Channel
    /// Why recent connections were refused or failed, by target (`host:port`), for the
    /// downloader to report instead of the SOCKS reply code AsyncHTTPClient sees.
    private let failures = Locked<[String: WebImageError]>([:])

    private init(
        listener: any Channel, policy: AddressPolicy, upstream: ProxySettings?, resolver: any HostResolver, connectTimeout: TimeAmount
    ) {
        self.listener = listener
        host = listener.localAddress?.ipAddress ?? "127.0.0.1"
        port = listener.localAddress?.port ?? 0
        self.policy = policy
        self.upstream = upstream
        self.resolver = resolver
        self.connectTimeout = connectTimeout
    }

    /// Starts listening on a random loopback address (127.0.0.1 where no other can be bound)
    /// with a port the system picks. It blocks for the bind (tens of microseconds), so that the
    /// downloader's initializer can stay synchronous.
    static func start(policy: AddressPolicy, upstream: ProxySettings?, resolver: any HostResolver, connectTimeout: TimeAmount) throws
        -> EgressGuard
    {
        let box = Locked<EgressGuard?>(nil)
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                guard let egress = box.withLock({ $0 }), let peer = channel.remoteAddress, let local = channel.localAddress,
                    LocalPeer.isThisProcess(peer: peer, local: local)
                else { return channel.close() }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(SOCKSServerHandshakeHandler())
                    try channel.pipeline.syncOperations.addHandler(GuardHandshakeHandler(egress: egress), name: GuardHandshakeHandler.name)
                }
            }
        let random = "127.\(UInt8.random(in: 1...254)).\(UInt8.random(in: 0...255)).\(UInt8.random(in: 1...254))"
        let listener = try (try? bootstrap.bind(host: random, port: 0).wait()) ?? bootstrap.bind(host: "127.0.0.1", port: 0).wait()
        let egress = EgressGuard(
            listener: listener, policy: policy, upstream: upstream, resolver: resolver, connectTimeout: connectTimeout)
        box.withLock { $0 = egress }
        return egress
    }

    /// Stops listening; connections already relayed end when their client closes them.
    func shutdown() async {
        try? await listener.close()
    }

    /// Why the last connection to `host:port` was refused or failed, if it was.
    func failure(host: String, port: Int) -> WebImageError? {
        failures.withLock { $0[Self.key(host, port)] }
    }

    // MARK: - One connection

    /// The addresses to try for a SOCKS target, in order, every one allowed by the policy; or
    /// the refusal (or the failed lookup), which is also recorded for ``failure(host:port:)``.
    func destinations(for target: SOCKSAddress) async -> Result<[SocketAddress], WebImageError> {
        let result = await judge(target)
        if case .failure(let error) = result {
            let (host, port) = Self.hostAndPort(target)
            failures.withLock { failures in
                if failures.count >= 4096 { failures.removeAll() }
                failures[Self.key(host, port)] = error
            }
        }
        return result
    }

    private func judge(_ target: SOCKSAddress) async -> Result<[SocketAddress], WebImageError> {
        let (host, port) = Self.hostAndPort(target)
        if let refusal = policy.refusalBeforeLookup(of: host) { return .failure(refusal) }
        if let literal = IPAddress(host) { return Self.socketAddresses([literal], port: port) }
        let resolved: [IPAddress]
        do {
            resolved = try await resolver.addresses(of: host)
        } catch {
            return .failure(WebImageError(.cannotConnect, "\(error)", underlying: error))
        }
        var allowed: [IPAddress] = []
        var firstRefusal: WebImageError?
        for address in resolved {
            switch policy.decision(for: address, host: host) {
            case .allow: allowed.append(address)
            case .refuse(let rule):
                firstRefusal = firstRefusal ?? WebImageError(.refusedAddress, "\(address) (\(host)) is refused: \(rule)")
            }
        }
        guard !allowed.isEmpty else {
            return .failure(firstRefusal ?? WebImageError(.cannotConnect, "\(host) has no address"))
        }
        return Self.socketAddresses(allowed, port: port)
    }

    /// Judges a client's CONNECT target, connects to an allowed address, and splices the two
    /// connections; or tells the client why not, and closes its connection.
    func open(_ target: SOCKSAddress, for client: any Channel) async {
        let judged = await destinations(for: target)
        let addresses: [SocketAddress]
        switch judged {
        case .failure(let error):
            Self.reply(error.code == .refusedAddress ? .notAllowed : .hostUnreachable, on: client)
            return
        case .success(let allowed):
            addresses = allowed
        }
        let (host, _) = Self.hostAndPort(target)
        let connected =
            if let proxy = upstream?.tunnelProxy(forHost: host) {
                tunnel(through: proxy, to: addresses[0], on: client.eventLoop)
            } else {
                connect(to: addresses, on: client.eventLoop)
            }
        connected.whenComplete { result in
            switch result {
            case .success(let upstream):
                self.forgetFailure(of: target)
                Self.splice(client, upstream)
            case .failure(let error):
                self.recordConnectFailure(error, target: target)
                Self.reply(.refused, on: client)
            }
        }
    }

    /// Answers a CONNECT that will not be relayed, and closes the connection.
    static func reply(_ reply: SOCKSServerReply, on channel: any Channel) {
        let response = SOCKSResponse(reply: reply, boundAddress: .address(try! SocketAddress(ipAddress: "0.0.0.0", port: 0)))
        channel.writeAndFlush(ServerMessage.response(response)).whenComplete { _ in close(channel) }
    }

    /// Closes a client's connection during the handshake. The guard's handler leaves first: the
    /// SOCKS handler, as the pipeline removes it, hands on what it buffered as raw bytes.
    static func close(_ channel: any Channel) {
        channel.pipeline.removeHandler(name: GuardHandshakeHandler.name).whenComplete { _ in channel.close(promise: nil) }
    }

    /// Glues the client's connection to the upstream one (both on the client's event loop), then
    /// tells the client the tunnel is up and takes the handshake handlers away; bytes the client
    /// sent early are kept by the SOCKS handler and handed on as it leaves.
    static func splice(_ client: any Channel, _ upstream: any Channel) {
        client.eventLoop.execute {
            let (clientSide, upstreamSide) = GlueHandler.matchedPair()
            do {
                try client.pipeline.syncOperations.addHandler(clientSide)
                try upstream.pipeline.syncOperations.addHandler(upstreamSide)
            } catch {
                client.close(promise: nil)
                upstream.close(promise: nil)
                return
            }
            let bound = upstream.localAddress ?? (try! SocketAddress(ipAddress: "0.0.0.0", port: 0))
            client.writeAndFlush(ServerMessage.response(SOCKSResponse(reply: .succeeded, boundAddress: .address(bound))), promise: nil)
            // A proxy tunnel's handler kept what came after the proxy's answer; it hands it on too.
            upstream.pipeline.syncOperations.removeHandler(name: ProxyTunnelHandler.name, promise: nil)
            let pipeline = client.pipeline.syncOperations
            pipeline.removeHandler(name: GuardHandshakeHandler.name, promise: nil)
            if let socks = try? pipeline.handler(type: SOCKSServerHandshakeHandler.self) { pipeline.removeHandler(socks, promise: nil) }
        }
    }

    /// Connects to the first of `addresses` that answers.
    func connect(to addresses: [SocketAddress], on eventLoop: any EventLoop) -> EventLoopFuture<any Channel> {
        guard let first = addresses.first else {
            return eventLoop.makeFailedFuture(WebImageError(.cannotConnect, "no address to connect to"))
        }
        let rest = Array(addresses.dropFirst())
        return ClientBootstrap(group: eventLoop)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .connect(to: first)
            .flatMapError { error in rest.isEmpty ? eventLoop.makeFailedFuture(error) : self.connect(to: rest, on: eventLoop) }
    }

    /// Connects to an HTTP proxy and asks it for a tunnel to `address`.
    private func tunnel(through proxy: URL, to address: SocketAddress, on eventLoop: any EventLoop) -> EventLoopFuture<any Channel> {
        let established = eventLoop.makePromise(of: Void.self)
        let target =
            address.protocol == .inet6
            ? "[\(address.ipAddress ?? "")]:\(address.port ?? 0)" : "\(address.ipAddress ?? ""):\(address.port ?? 0)"
        return ClientBootstrap(group: eventLoop)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ProxyTunnelHandler(target: target, proxy: proxy, established: established), name: ProxyTunnelHandler.name)
                }
            }
            .connect(host: proxy.host ?? "", port: proxy.port ?? 1080)
            .flatMap { channel in established.futureResult.map { channel } }
    }

    /// A connection to `target` was made: an older failure no longer explains a later one.
    private func forgetFailure(of target: SOCKSAddress) {
        let (host, port) = Self.hostAndPort(target)
        failures.withLock { _ = $0.removeValue(forKey: Self.key(host, port)) }
    }

    /// Records a connection that failed after its addresses were allowed.
    func recordConnectFailure(_ error: any Error, target: SOCKSAddress) {
        let (host, port) = Self.hostAndPort(target)
        let failure = WebImageError(.cannotConnect, "cannot connect to \(host):\(port): \(error)", underlying: error)
        failures.withLock { $0[Self.key(host, port)] = failure }
    }

    private static func socketAddresses(_ addresses: [IPAddress], port: Int) -> Result<[SocketAddress], WebImageError> {
        do {
            return .success(try addresses.map { try SocketAddress(ipAddress: $0.description, port: port) })
        } catch {
            return .failure(WebImageError(.cannotConnect, "\(error)", underlying: error))
        }
    }

    static func hostAndPort(_ target: SOCKSAddress) -> (String, Int) {
        switch target {
        case .domain(let host, let port): (host, port)
        case .address(let address): (address.ipAddress ?? "?", address.port ?? 0)
        }
    }

    /// One spelling per target: an address in its canonical form, a name in lower case.
    static func key(_ host: String, _ port: Int) -> String {
        let normalized = IPAddress(host)?.description ?? host.lowercased()
        return "\(normalized):\(port)"
    }
}

/// Answers one client's SOCKS5 handshake: no authentication, CONNECT only; then asks the guard
/// where to connect, connects, replies, and leaves the two connections glued together.
private final class GuardHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ClientMessage

    /// The handler's name in the pipeline, to take it away before the SOCKS handler.
    static let name = "webimage.egress-guard"
    private let egress: EgressGuard

    init(egress: EgressGuard) {
        self.egress = egress
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let channel = context.channel
        switch unwrapInboundIn(data) {
        case .greeting(let greeting):
            let method: AuthenticationMethod = greeting.methods.contains(.noneRequired) ? .noneRequired : .noneAcceptable
            channel.writeAndFlush(ServerMessage.selectedAuthenticationMethod(SelectedAuthenticationMethod(method: method)), promise: nil)
            if method == .noneAcceptable { EgressGuard.close(channel) }
        case .request(let request) where request.command == .connect:
            let egress = egress
            let target = request.addressType
            Task { await egress.open(target, for: channel) }
        case .request:
            EgressGuard.reply(.commandUnsupported, on: channel)
        case .authenticationData:
            EgressGuard.close(channel)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        EgressGuard.close(context.channel)
    }

}

@available(*, unavailable)
extension GuardHandshakeHandler: Sendable {}
