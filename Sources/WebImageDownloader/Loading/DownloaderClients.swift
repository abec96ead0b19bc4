import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// The HTTP clients a downloader sends through, one per way out: direct or through a proxy,
/// verifying certificates or not (a lax connection is never reused for a strict request). Its
/// own are made on first use from one base configuration; a client the application handed over
/// serves every request, is never shut down here, and gets a lax request's TLS per request.
///
/// With an address policy every own client goes through the ``EgressGuard``; if the guard could
/// not start, no client is handed out and every request fails with the reason (fail closed).
final class DownloaderClients: Sendable {
    private struct Key: Hashable {
        let proxy: URL?
        let lax: Bool
    }

    private let base: HTTPClient.Configuration
    private let laxTLS: TLSConfiguration
    private let proxies: ProxySettings?
    private let external: HTTPClient?
    private let made = Locked<[Key: HTTPClient]>([:])
    /// The direct, verifying client of our own, made at once: most requests use it.
    private let direct: HTTPClient?
    /// The address guard, when the configuration has a policy and the guard started.
    let egress: EgressGuard?
    /// Why no request may be sent, when the guard was asked for and could not be had.
    private let unavailable: WebImageError?

    init(configuration: ImageDownloaderConfiguration, base: HTTPClient.Configuration, external: HTTPClient?) {
        var base = base
        let tls = configuration.tlsConfiguration ?? TLSConfiguration.makeClientConfiguration()
        var lax = tls
        lax.certificateVerification = .none
        laxTLS = lax
        self.external = external
        var egress: EgressGuard?
        var unavailable: WebImageError?
        if let policy = configuration.addressPolicy {
            let proxies = [configuration.proxy?.httpProxy, configuration.proxy?.httpsProxy].compactMap { $0 }
            if external != nil {
                unavailable = WebImageError(
                    .refusedAddress, "the address policy needs the downloader's own HTTP clients, not one handed to it")
            } else if let socks = proxies.first(where: { $0.scheme?.lowercased() != "http" }) {
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
        if let egress { base.proxy = .socksServer(host: egress.host, port: egress.port) }
        base.tlsConfiguration = tls
        self.base = base
        self.egress = egress
        self.unavailable = unavailable
        // Behind the guard the client's only way out is the guard.
        proxies = egress == nil ? configuration.proxy : nil
        direct = external == nil ? HTTPClient(eventLoopGroupProvider: .singleton, configuration: base) : nil
        if let direct { made.withLock { $0[Key(proxy: nil, lax: false)] = direct } }
    }

    /// The client for a request to `url`, and the TLS configuration to set on the request itself
    /// (only for a lax request through a client that is not the downloader's own).
    func client(for url: URL, allowInvalidCertificates lax: Bool) throws(WebImageError) -> (HTTPClient, TLSConfiguration?) {
        if let unavailable { throw unavailable }
        if let external { return (external, lax ? laxTLS : nil) }
        // The common case, no proxy and a verifying client, without the table's lock.
        if let direct, proxies == nil, !lax { return (direct, nil) }
        let key = Key(proxy: proxies?.proxy(for: url), lax: lax)
        let client = try made.withLock { clients throws(WebImageError) in
            if let client = clients[key] { return client }
            var configuration = base
            if lax { configuration.tlsConfiguration = laxTLS }
            if let proxy = key.proxy { configuration.proxy = try Self.proxy(proxy) }
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients[key] = client
            return client
        }
        return (client, nil)
    }

    /// Why the certificate of `url`'s host did not verify, found by a second handshake that
    /// goes out the same way the request did; nil when that cannot be told.
    func explainCertificateFailure(for url: URL) async -> String? {
        guard let host = url.host, external == nil else { return nil }  // a handed-over client's way out is its own
        let route: CertificateDiagnosis.Route
        if let egress {
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

    /// The event loops the clients run on, for timers.
    var eventLoopGroup: any EventLoopGroup {
        external?.eventLoopGroup ?? MultiThreadedEventLoopGroup.singleton
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
        // running are released in the background instead.
        for client in made.withLock({ Array($0.values) }) { client.shutdown { _ in } }
        if let egress { Task { await egress.shutdown() } }
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
