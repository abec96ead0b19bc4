import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// The HTTP clients a downloader sends through, one per way out: direct, through the address
/// guard, through a proxy; verifying certificates or not (a lax connection is never reused for a
/// strict request). Its own are made on first use from one base configuration; a client the
/// application handed over serves every request, is never shut down here, and gets a lax
/// request's TLS per request.
///
/// With an address policy every own client goes through the ``EgressGuard``; if the guard could
/// not start, no client is handed out and every request fails with the reason (fail closed).
/// Plain `http:` requests for an HTTP proxy go through the guard's forward port, policy or not:
/// AsyncHTTPClient tunnels them with `CONNECT`, which proxies refuse for port 80, and the guard
/// sends them in absolute form as curl does.
final class DownloaderClients: Sendable {
    /// How a client's connections go out.
    private enum Route: Hashable {
        /// The base configuration's way: direct, or the guard's tunnel port with a policy.
        case base
        /// The guard's forward port: plain HTTP to the HTTP proxy in absolute form.
        case forwarded
        /// AsyncHTTPClient's own proxy support (`CONNECT` through an HTTP proxy, or SOCKS).
        case proxy(URL)
    }

    private struct Key: Hashable {
        let route: Route
        let lax: Bool
    }

    private let base: HTTPClient.Configuration
    private let laxTLS: TLSConfiguration
    private let proxies: ProxySettings?
    private let external: HTTPClient?
    private let made = Locked<[Key: HTTPClient]>([:])
    /// The base, verifying client of our own, made at once: most requests use it.
    private let direct: HTTPClient?
    /// The address guard: with a policy, or as the forwarder of plain HTTP to an HTTP proxy.
    let egress: EgressGuard?
    /// Whether every request goes through the guard (the configuration has an address policy).
    private let guardsEveryRequest: Bool
    /// Why no request that needs the guard may be sent, when it could not be had.
    private let unavailable: WebImageError?

    init(configuration: ImageDownloaderConfiguration, base: HTTPClient.Configuration, external: HTTPClient?) {
        var base = base
        let tls = configuration.tlsConfiguration ?? TLSConfiguration.makeClientConfiguration()
        var lax = tls
        lax.certificateVerification = .none
        laxTLS = lax
        self.external = external
        proxies = configuration.proxy
        // Resolving names in the guard is judging them by a policy that allows every address;
        // not for a handed-over client, nor through a proxy, which looks the names up itself.
        let resolvesInGuard = configuration.resolvesHostNames && external == nil && configuration.proxy == nil
        let policy = configuration.addressPolicy ?? (resolvesInGuard ? AddressPolicy(refusesSpecialAddresses: false) : nil)
        guardsEveryRequest = policy != nil
        let forwardsPlainHTTP = configuration.proxy?.httpProxy?.scheme?.lowercased() == "http"
        var egress: EgressGuard?
        var unavailable: WebImageError?
        if policy != nil || (forwardsPlainHTTP && external == nil) {
            let proxies = [configuration.proxy?.httpProxy, configuration.proxy?.httpsProxy].compactMap { $0 }
            if external != nil {
                unavailable = WebImageError(
                    .refusedAddress, "the address policy needs the downloader's own HTTP clients, not one handed to it")
            } else if policy != nil, let socks = proxies.first(where: { $0.scheme?.lowercased() != "http" }) {
                unavailable = WebImageError(
                    .refusedAddress, "behind the address guard only HTTP proxies can carry connections, not \(socks.absoluteString)")
            } else {
                do {
                    egress = try EgressGuard.start(
                        policy: policy, upstream: configuration.proxy, resolver: configuration.hostResolver,
                        connectTimeout: base.timeout.connect ?? .seconds(10))
                } catch {
                    unavailable = WebImageError(.refusedAddress, "the address guard could not start: \(error)", underlying: error)
                }
            }
        }
        if guardsEveryRequest, let egress { base.proxy = .socksServer(host: egress.host, port: egress.port) }
        base.tlsConfiguration = tls
        self.base = base
        self.egress = egress
        self.unavailable = unavailable
        direct = external == nil ? HTTPClient(eventLoopGroupProvider: .singleton, configuration: base) : nil
        if let direct { made.withLock { $0[Key(route: .base, lax: false)] = direct } }
    }

    /// The client for a request to `url`, and the TLS configuration to set on the request itself
    /// (only for a lax request through a client that is not the downloader's own).
    func client(for url: URL, allowsInvalidCertificates lax: Bool) throws(WebImageError) -> (HTTPClient, TLSConfiguration?) {
        let route = route(for: url)
        if let unavailable, guardsEveryRequest || route == .forwarded { throw unavailable }
        if let external { return (external, lax ? laxTLS : nil) }
        // The common case, the base verifying client, without the table's lock.
        if let direct, route == .base, !lax { return (direct, nil) }
        let key = Key(route: route, lax: lax)
        let client = try made.withLock { clients throws(WebImageError) in
            if let client = clients[key] { return client }
            var configuration = base
            if lax { configuration.tlsConfiguration = laxTLS }
            switch route {
            case .base: break
            case .forwarded:
                guard let egress, let port = egress.forwardPort else { throw WebImageError(.cannotConnect, "no forwarder for \(url)") }
                configuration.proxy = .socksServer(host: egress.host, port: port)
            case .proxy(let proxy): configuration.proxy = try Self.proxy(proxy)
            }
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients[key] = client
            return client
        }
        return (client, nil)
    }

    /// How a request to `url` goes out.
    private func route(for url: URL) -> Route {
        guard external == nil, let proxies else { return .base }
        if proxies.forwardsPlainHTTP(to: url) { return .forwarded }
        if guardsEveryRequest { return .base }
        return proxies.proxy(for: url).map(Route.proxy) ?? .base
    }

    /// Why the certificate of `url`'s host did not verify, found by a second handshake that
    /// goes out the same way the request did; nil when that cannot be told.
    func explainCertificateFailure(for url: URL) async -> String? {
        guard let host = url.host, external == nil else { return nil }  // a handed-over client's way out is its own
        let route: CertificateDiagnosis.Route
        if guardsEveryRequest, let egress {
            route = .socks(host: egress.host, port: egress.port)
        } else if let proxy = proxies?.proxy(for: url) {
            // A SOCKS proxy is not tunnelled through here: the reason stays untold.
            guard proxy.scheme?.lowercased() == "http" else { return nil }
            route = .tunnel(proxy: proxy)
        } else {
            route = .direct
        }
        return await CertificateDiagnosis.explain(
            host: host, port: url.effectivePort, route: route, timeout: base.timeout.connect ?? .seconds(10))
    }

    /// Shuts down the clients this made (never a handed-over one), then the guard.
    func shutdown() async throws {
        let clients = made.withLock { clients in
            defer { clients.removeAll() }
            return Array(clients.values)
        }
        for client in clients { try await client.shutdown() }
        await egress?.shutdown()
    }

    deinit {
        // AsyncHTTPClient traps when a client is released without a shutdown; clients left
        // running are released by their event loops instead, and the guard's listeners closed
        // there: nothing outlives this in a task of its own.
        for client in made.withLock({ Array($0.values) }) { client.shutdown { _ in } }
        egress?.close()
    }

    /// AsyncHTTPClient's form of a proxy URL.
    private static func proxy(_ url: URL) throws(WebImageError) -> HTTPClient.Configuration.Proxy {
        guard let host = url.host else { throw WebImageError(.invalidArgument, "the proxy \(url.absoluteString) has no host") }
        switch url.scheme?.lowercased() {
        case "http":
            let authorization = url.user.map { HTTPClient.Authorization.basic(username: $0, password: url.password ?? "") }
            return .server(host: host, port: url.port ?? 1080, authorization: authorization)
        case "socks5", "socks5h":
            return .socksServer(host: host, port: url.port ?? 1080)
        default:
            throw WebImageError(.invalidArgument, "the proxy \(url.absoluteString) is neither http:// nor socks5://")
        }
    }
}
