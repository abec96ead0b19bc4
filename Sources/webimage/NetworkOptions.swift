import ArgumentParser
import Foundation
import NIOSSL
import WebImage

/// How `fetch` and `prefetch` reach the network: the address guard, proxies as curl reads them,
/// TLS trust and client certificates, and whether the origin's caching headers are obeyed.
struct NetworkOptions: ParsableArguments {
    @Flag(
        help: ArgumentHelp(
            "Refuse loopback, private, link-local and other non-public addresses, checked after DNS on every connection and redirect."))
    var blockPrivateAddresses = false

    @Option(
        name: .customLong("allow-address"),
        help: ArgumentHelp("With --block-private-addresses, allow this address or CIDR block anyway (repeatable).", valueName: "CIDR"))
    var allowedAddresses: [String] = []

    @Option(
        name: [.customShort("x"), .long],
        help: ArgumentHelp(
            "Go through this proxy (http://[user:password@]host:port or socks5://host:port) instead of $https_proxy, $http_proxy and $all_proxy.",
            valueName: "URL"))
    var proxy: String?

    @Option(
        name: .customLong("noproxy"),
        help: ArgumentHelp("Hosts to reach directly, comma-separated (instead of $no_proxy).", valueName: "LIST"))
    var noProxy: String?

    @Flag(
        help: ArgumentHelp(
            "Use a cached image only while the origin's Cache-Control/Expires say it is fresh; revalidate it (If-None-Match) once stale."))
    var respectCacheControl = false

    @Option(help: ArgumentHelp("Trust the certificate authorities in this PEM file too.", valueName: "FILE"))
    var cacert: String?

    @Option(help: ArgumentHelp("Present this client certificate (PEM) for mutual TLS; needs --key.", valueName: "FILE"))
    var cert: String?

    @Option(help: ArgumentHelp("The client certificate's private key (PEM).", valueName: "FILE"))
    var key: String?

    func validate() throws {
        for cidr in allowedAddresses where IPNetwork(cidr) == nil {
            throw ValidationError("--allow-address: \"\(cidr)\" is not an address or CIDR block")
        }
        if !allowedAddresses.isEmpty, !blockPrivateAddresses {
            throw ValidationError("--allow-address goes with --block-private-addresses")
        }
        if let proxy, ProxySettings(all: URL(string: proxy) ?? URL(fileURLWithPath: "/")).httpProxy?.host == nil {
            throw ValidationError("--proxy: \"\(proxy)\" is not a proxy URL")
        }
        if (cert == nil) != (key == nil) { throw ValidationError("--cert and --key go together") }
        for path in [cacert, cert, key].compactMap({ $0 }) where !FileManager.default.isReadableFile(atPath: path) {
            throw ValidationError("cannot read \(path)")
        }
    }

    /// Sets the guard, the proxies and TLS on a downloader configuration.
    func apply(to configuration: inout ImageDownloaderConfiguration, environment: [String: String]) throws {
        if blockPrivateAddresses {
            configuration.addressPolicy = AddressPolicy(allowedNetworks: allowedAddresses.compactMap { IPNetwork($0) })
        }
        configuration.proxy = proxySettings(environment: environment)
        configuration.tlsConfiguration = try tlsConfiguration()
    }

    /// `--proxy` and `--noproxy` over the environment's variables, as curl.
    func proxySettings(environment: [String: String]) -> ProxySettings? {
        let fromEnvironment = ProxySettings.fromEnvironment(environment)
        let bypass = noProxy.map { $0.split(separator: ",").map(String.init) } ?? fromEnvironment?.noProxy ?? []
        if let proxy, let url = URL(string: proxy) { return ProxySettings(all: url, noProxy: bypass) }
        guard let fromEnvironment else { return nil }
        return ProxySettings(httpProxy: fromEnvironment.httpProxy, httpsProxy: fromEnvironment.httpsProxy, noProxy: bypass)
    }

    private func tlsConfiguration() throws -> TLSConfiguration? {
        guard cacert != nil || cert != nil else { return nil }
        var tls = TLSConfiguration.makeClientConfiguration()
        do {
            if let cacert { tls.additionalTrustRoots = [.file(cacert)] }
            if let cert, let key {
                tls.certificateChain = try NIOSSLCertificate.fromPEMFile(cert).map { .certificate($0) }
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))
            }
        } catch {
            throw CommandFailure("cannot read the client certificate or key: \(error)")
        }
        return tls
    }
}
