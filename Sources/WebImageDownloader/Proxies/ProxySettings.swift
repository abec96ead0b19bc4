public import Foundation

/// The proxies a downloader goes through, by the scheme of the URL it loads, and the hosts that
/// bypass them, as curl reads them from its environment.
///
/// A proxy URL is `http://[user:password@]host[:port]` (an HTTP proxy: plain requests in
/// absolute form, HTTPS through `CONNECT`; port 1080 when absent, as curl) or
/// `socks5://host[:port]` / `socks5h://host[:port]` (the proxy resolves names in both here).
/// A proxy given without a scheme is an HTTP proxy.
public struct ProxySettings: Sendable, Hashable {
    /// The proxy for `http:` URLs.
    public var httpProxy: URL?
    /// The proxy for `https:` URLs.
    public var httpsProxy: URL?
    /// Hosts reached directly: a name matches itself and its subdomains (`example.com` and
    /// `.example.com` both match `img.example.com`), an address or CIDR block matches the
    /// addresses in it, `*` matches every host.
    public var noProxy: [String]

    /// Creates settings.
    public init(httpProxy: URL? = nil, httpsProxy: URL? = nil, noProxy: [String] = []) {
        self.httpProxy = httpProxy.map(Self.withScheme)
        self.httpsProxy = httpsProxy.map(Self.withScheme)
        self.noProxy = noProxy.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
    }

    /// One proxy for every scheme (curl's `--proxy`).
    public init(all proxy: URL, noProxy: [String] = []) {
        self.init(httpProxy: proxy, httpsProxy: proxy, noProxy: noProxy)
    }

    /// The settings curl reads: `http_proxy` for `http:` URLs, `https_proxy` for `https:`,
    /// `all_proxy` for either when its own is unset, and `no_proxy`; each lower-case name first,
    /// then its upper-case form. `HTTP_PROXY` is ignored when `REQUEST_METHOD` is set, as curl
    /// and Go do, because a CGI program gets a client's `Proxy:` header under that name
    /// ("httpoxy"). Nil when no proxy is set.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> ProxySettings? {
        func value(_ name: String, upperCase: Bool = true) -> String? {
            let candidates = upperCase ? [name, name.uppercased()] : [name]
            return candidates.lazy.compactMap { environment[$0] }.first { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        }
        let isCGI = environment["REQUEST_METHOD"] != nil
        let all = value("all_proxy")
        let http = value("http_proxy", upperCase: !isCGI) ?? all
        let https = value("https_proxy") ?? all
        guard http != nil || https != nil else { return nil }
        return ProxySettings(
            httpProxy: http.flatMap(parse), httpsProxy: https.flatMap(parse),
            noProxy: (value("no_proxy") ?? "").split(separator: ",").map(String.init))
    }

    /// The proxy for `url`, or nil to connect directly.
    public func proxy(for url: URL) -> URL? {
        guard let host = url.host?.lowercased(), !bypasses(host) else { return nil }
        switch url.scheme?.lowercased() {
        case "http": return httpProxy
        case "https": return httpsProxy
        default: return nil
        }
    }

    /// The proxy the address guard tunnels a connection to `host` through with `CONNECT`: the
    /// HTTPS proxy (plain HTTP through a proxy goes in absolute form, see
    /// ``forwardsPlainHTTP(to:)``); nil for a host on the no-proxy list.
    func tunnelProxy(forHost host: String) -> URL? {
        bypasses(host) ? nil : httpsProxy
    }

    /// Whether a plain `http:` request to `url` goes to an HTTP proxy, which takes it in absolute
    /// form (`GET http://host/path`) as curl sends it: a proxy with Debian's stock squid rules
    /// refuses `CONNECT` to any port but 443.
    func forwardsPlainHTTP(to url: URL) -> Bool {
        url.scheme?.lowercased() == "http" && proxy(for: url)?.scheme?.lowercased() == "http"
    }

    /// `Proxy-Authorization` (Basic) for the credentials in a proxy URL's user and password;
    /// nil when it has none.
    static func authorization(for proxy: URL) -> String? {
        guard let user = proxy.user else { return nil }
        let credentials = "\(user.removingPercentEncoding ?? user):\(proxy.password?.removingPercentEncoding ?? "")"
        return "Basic " + Data(credentials.utf8).base64EncodedString()
    }

    /// Whether `host` is on the no-proxy list.
    public func bypasses(_ host: String) -> Bool {
        let name = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        let address = IPAddress(name)
        return noProxy.contains { entry in
            if entry == "*" { return true }
            if let address, let network = IPNetwork(entry) { return network.contains(address) }
            let domain = entry.hasPrefix(".") ? String(entry.dropFirst()) : entry
            return name == domain || name.hasSuffix("." + domain)
        }
    }

    /// A proxy URL from its textual form; nil when it has no host.
    static func parse(_ text: String) -> URL? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let url = URL(string: trimmed.contains("://") ? trimmed : "http://" + trimmed), url.host != nil else { return nil }
        return url
    }

    private static func withScheme(_ url: URL) -> URL {
        url.scheme == nil ? (parse(url.absoluteString) ?? url) : url
    }
}
