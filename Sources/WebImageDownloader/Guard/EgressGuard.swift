import Foundation
import NIOCore
import NIOHTTP1
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
///
/// With an HTTP proxy for plain `http:` URLs it listens on a second port, ``forwardPort``, for
/// the clients that send those: each request there goes to the proxy in absolute form
/// (`GET http://host:port/path`), as curl sends it, because proxies refuse `CONNECT` to ports
/// other than 443 (Debian's squid does, `TCP_DENIED/403`). The proxy is told the host name, not
/// the checked address: it must put the name in the `Host` header it sends on (RFC 9112 3.2.2,
/// squid does), and name-based hosting needs it there. So behind the guard every address the
/// name resolves to must be allowed, not just one, and the proxy's own lookup is left to its own
/// rules. A downloader without an address policy uses the guard for this relay alone
/// (`policy` nil): it then judges nothing and resolves nothing.
final class EgressGuard: Sendable {
    /// The loopback address and port the guard listens on.
    let host: String
    let port: Int
    /// The port for plain HTTP requests to be forwarded to the HTTP proxy in absolute form; nil
    /// without an HTTP proxy.
    let forwardPort: Int?
    /// The rules every target is judged by; nil to relay without judging (a proxy adapter only).
    let policy: AddressPolicy?
    /// The proxies connections go through: `CONNECT` to the allowed address for a tunnel,
    /// absolute-form requests on ``forwardPort``.
    private let upstream: ProxySettings?
    private let resolver: any HostResolver
    private let connectTimeout: TimeAmount
    private let listeners: [any Channel]
    /// Why recent connections were refused or failed, by target (`host:port`), for the
    /// downloader to report instead of the SOCKS reply code AsyncHTTPClient sees.
    private let failures = Locked<[String: WebImageError]>([:])

    private init(
        listener: any Channel, forwarder: (any Channel)?, policy: AddressPolicy?, upstream: ProxySettings?, resolver: any HostResolver,
        connectTimeout: TimeAmount
    ) {
        listeners = [listener] + (forwarder.map { [$0] } ?? [])
        host = listener.localAddress?.ipAddress ?? "127.0.0.1"
        port = listener.localAddress?.port ?? 0
        forwardPort = forwarder?.localAddress?.port
        self.policy = policy
        self.upstream = upstream
        self.resolver = resolver
        self.connectTimeout = connectTimeout
    }

    /// Starts listening on a random loopback address (127.0.0.1 where no other can be bound)
    /// with a port the system picks, and on a second port of the same address when `upstream`
    /// has an HTTP proxy for plain HTTP. It blocks for the binds (tens of microseconds), so that
    /// the downloader's initializer can stay synchronous.
    static func start(policy: AddressPolicy?, upstream: ProxySettings?, resolver: any HostResolver, connectTimeout: TimeAmount) throws
        -> EgressGuard
    {
        let box = Locked<EgressGuard?>(nil)
        func bootstrap(forwarding: Bool) -> ServerBootstrap {
            ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelOption(.allowRemoteHalfClosure, value: true)
                .childChannelOption(.recvAllocator, value: Self.relayReads)
                .childChannelInitializer { channel in
                    guard let egress = box.withLock({ $0 }), let peer = channel.remoteAddress, let local = channel.localAddress,
                        LocalPeer.isThisProcess(peer: peer, local: local)
                    else { return channel.close() }
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(SOCKSServerHandshakeHandler())
                        try channel.pipeline.syncOperations.addHandler(
                            GuardHandshakeHandler(egress: egress, forwarding: forwarding), name: GuardHandshakeHandler.name)
                    }
                }
        }
        let random = "127.\(UInt8.random(in: 1...254)).\(UInt8.random(in: 0...255)).\(UInt8.random(in: 1...254))"
        let tunnels = bootstrap(forwarding: false)
        let listener = try (try? tunnels.bind(host: random, port: 0).wait()) ?? tunnels.bind(host: "127.0.0.1", port: 0).wait()
        var forwarder: (any Channel)?
        if upstream?.httpProxy?.scheme?.lowercased() == "http" {
            do {
                forwarder = try bootstrap(forwarding: true).bind(host: listener.localAddress?.ipAddress ?? "127.0.0.1", port: 0).wait()
            } catch {
                try? listener.close().wait()
                throw error
            }
        }
        let egress = EgressGuard(
            listener: listener, forwarder: forwarder, policy: policy, upstream: upstream, resolver: resolver,
            connectTimeout: connectTimeout)
        box.withLock { $0 = egress }
        return egress
    }

    /// Stops listening; connections already relayed end when their client closes them.
    func shutdown() async {
        for listener in listeners { try? await listener.close() }
    }

    /// ``shutdown()`` without waiting: the listeners' close is asked of their event loops, for
    /// an owner that is going away and cannot wait.
    func close() {
        for listener in listeners { listener.close(promise: nil) }
    }

    /// Succeeds once every listener is closed.
    var listenersClosed: EventLoopFuture<Void> {
        EventLoopFuture.andAllComplete(listeners.map(\.closeFuture), on: MultiThreadedEventLoopGroup.singleton.any())
    }

    /// Why the last connection to `host:port` was refused or failed, if it was.
    func failure(host: String, port: Int) -> WebImageError? {
        failures.withLock { $0[Self.key(host, port)] }
    }

    // MARK: - One connection

    /// The addresses to try for a SOCKS target, in order, every one allowed by the policy; or
    /// the refusal (or the failed lookup), which is also recorded for ``failure(host:port:)``.
    func destinations(for target: SOCKSAddress, everyAddress: Bool = false) async -> Result<[SocketAddress], WebImageError> {
        let result = await judge(target, everyAddress: everyAddress)
        if case .failure(let error) = result {
            let (host, port) = Self.hostAndPort(target)
            failures.withLock { failures in
                if failures.count >= 4096 { failures.removeAll() }
                failures[Self.key(host, port)] = error
            }
        }
        return result
    }

    /// The allowed addresses of `target`; with `everyAddress`, a refusal when any address is
    /// refused (the name goes on to a proxy, which may connect to any of them). Without a policy,
    /// nothing is judged or looked up: the target's own address, or none for a name.
    private func judge(_ target: SOCKSAddress, everyAddress: Bool) async -> Result<[SocketAddress], WebImageError> {
        let (host, port) = Self.hostAndPort(target)
        guard let policy else {
            if case .address(let address) = target { return .success([address]) }
            return .success([])
        }
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
                firstRefusal =
                    firstRefusal
                    ?? WebImageError(.refusedAddress, "\(address) (\(host)) is refused: \(rule)", refusal: .addressPolicy(rule: rule))
            }
        }
        guard !allowed.isEmpty, !(everyAddress && firstRefusal != nil) else {
            return .failure(firstRefusal ?? WebImageError(.cannotConnect, "\(host) has no address"))
        }
        return Self.socketAddresses(allowed, port: port)
    }

    /// Judges a client's CONNECT target, connects to an allowed address (through the HTTPS
    /// proxy's tunnel when there is one), and splices the two connections; or tells the client
    /// why not, and closes its connection.
    func open(_ target: SOCKSAddress, for client: any Channel) async {
        let addresses: [SocketAddress]
        switch await destinations(for: target) {
        case .failure(let error):
            return Self.reply(error.code == .refusedAddress ? .notAllowed : .hostUnreachable, on: client)
        case .success(let allowed):
            addresses = allowed
        }
        let (host, port) = Self.hostAndPort(target)
        let connected: EventLoopFuture<any Channel>
        if let proxy = upstream?.tunnelProxy(forHost: host) {
            // The checked address; without a policy, the name, for the proxy to resolve.
            let destination = addresses.first.map(Self.authority) ?? Self.authority(host, port)
            connected = tunnel(through: proxy, to: destination, on: client.eventLoop)
        } else if addresses.isEmpty {
            connected = connect(host: host, port: port, on: client.eventLoop)
        } else {
            connected = connect(to: addresses, on: client.eventLoop)
        }
        relay(client, target: target, over: connected, forwarding: nil)
    }

    /// Judges the target of a client that will send plain HTTP requests (every address of it
    /// must be allowed), connects to the HTTP proxy, and relays the client's requests to it in
    /// absolute form with the proxy's credentials; or tells the client why not.
    func forward(_ target: SOCKSAddress, for client: any Channel) async {
        guard let proxy = upstream?.httpProxy else { return Self.reply(.hostUnreachable, on: client) }
        if case .failure(let error) = await destinations(for: target, everyAddress: true) {
            return Self.reply(error.code == .refusedAddress ? .notAllowed : .hostUnreachable, on: client)
        }
        let (host, port) = Self.hostAndPort(target)
        let connected = connect(host: proxy.host ?? "", port: proxy.port ?? 1080, on: client.eventLoop)
        let forwarding = AbsoluteFormHandler.Settings(authority: Self.authority(host, port, defaultPort: 80), proxy: proxy)
        relay(client, target: target, over: connected, forwarding: forwarding)
    }

    /// Splices the client to the connection once it is made, or records why it was not and
    /// refuses the client.
    private func relay(
        _ client: any Channel, target: SOCKSAddress, over connected: EventLoopFuture<any Channel>,
        forwarding: AbsoluteFormHandler.Settings?
    ) {
        connected.whenComplete { result in
            switch result {
            case .success(let upstream):
                self.forgetFailure(of: target)
                Self.splice(client, upstream, forwarding: forwarding)
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
    /// sent early are kept by the SOCKS handler and handed on as it leaves. With `forwarding`, the
    /// client's requests are decoded, rewritten to absolute form and encoded again on their way;
    /// the proxy's answers go back byte for byte.
    static func splice(_ client: any Channel, _ upstream: any Channel, forwarding: AbsoluteFormHandler.Settings? = nil) {
        client.eventLoop.execute {
            let (clientSide, upstreamSide) = GlueHandler.matchedPair()
            do {
                if let forwarding {
                    try client.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
                    try client.pipeline.syncOperations.addHandler(AbsoluteFormHandler(forwarding))
                    try upstream.pipeline.syncOperations.addHandler(HTTPRequestEncoder())
                }
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

    /// The reads of a relayed connection: up to 16 KiB, where NIO's default grows to 64 KiB. A
    /// relay passes each read on at once, so larger reads gain little, and every connection
    /// keeps its last read's buffer: a crawl has hundreds open, two relay channels each.
    static let relayReads = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: 16384)

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
            .channelOption(.recvAllocator, value: Self.relayReads)
            .connect(to: first)
            .flatMapError { error in rest.isEmpty ? eventLoop.makeFailedFuture(error) : self.connect(to: rest, on: eventLoop) }
    }

    /// Connects to `host` by name, resolved by NIO (only without a policy: nothing is judged).
    private func connect(host: String, port: Int, on eventLoop: any EventLoop) -> EventLoopFuture<any Channel> {
        ClientBootstrap(group: eventLoop)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .connect(host: host, port: port)
    }

    /// Connects to an HTTP proxy and asks it for a tunnel to `target` (`host:port`).
    private func tunnel(through proxy: URL, to target: String, on eventLoop: any EventLoop) -> EventLoopFuture<any Channel> {
        let established = eventLoop.makePromise(of: Void.self)
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

    /// `host:port` as a request target, an IPv6 address in brackets; the port left out when it is
    /// `defaultPort`.
    static func authority(_ host: String, _ port: Int, defaultPort: Int? = nil) -> String {
        let name = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return port == defaultPort ? name : "\(name):\(port)"
    }

    static func authority(_ address: SocketAddress) -> String {
        authority(address.ipAddress ?? "", address.port ?? 0)
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
    /// Whether the client will send plain HTTP requests for the HTTP proxy (the forward port).
    private let forwarding: Bool

    init(egress: EgressGuard, forwarding: Bool) {
        self.egress = egress
        self.forwarding = forwarding
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
            if forwarding {
                Task { await egress.forward(target, for: channel) }
            } else {
                Task { await egress.open(target, for: channel) }
            }
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
