import AsyncHTTPClient
import Foundation
import Testing
import WebImageTesting
@testable import WebImageDownloader
import WebImageTestSupport

/// Plain HTTP through an HTTP proxy: in absolute form, as curl sends it, because proxies refuse
/// `CONNECT` to port 80 and the like. Against Debian's own squid with its stock rules (the
/// machine's `/etc/squid/squid.conf`), and the test kit's proxy where a test must see what the
/// proxy was asked.
@Suite("Proxy forwarding")
struct ProxyForwardingTests {
    let png: [UInt8]

    init() throws {
        png = [UInt8](try Fixture.data("gradient-rgba.png"))
    }

    private func refusal(_ load: () async throws(WebImageError) -> LoadedData) async -> WebImageError? {
        do {
            _ = try await load()
            return nil
        } catch {
            return error
        }
    }

    @Test("Debian's squid refuses AsyncHTTPClient's CONNECT to a plain HTTP port; the downloader's absolute-form requests pass, kept alive")
    func squidStockRules() async throws {
        let squid = try await Squid.start()
        let origin = try await OriginServer.start()
        origin.route("/a.png", .ok(png, contentType: "image/png"))
        // What the downloader did before: AsyncHTTPClient tunnels every request with CONNECT.
        // AsyncHTTPClient retries a failed connection until the connect timeout, then reports why.
        var tunnelling = HTTPClient.Configuration()
        tunnelling.proxy = .server(host: "127.0.0.1", port: squid.port)
        tunnelling.timeout.connect = .milliseconds(300)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: tunnelling)
        await #expect(throws: HTTPClientError.invalidProxyResponse, "squid's stock rules deny CONNECT to a port other than 443") {
            _ = try await client.get(url: origin.url("/a.png").absoluteString).get()
        }
        try await client.shutdown()
        #expect(origin.requestCount("/a.png") == 0)

        let downloader = ImageDownloader(
            configuration: ImageDownloaderConfiguration(proxy: ProxySettings(all: squid.url), retryPolicy: .none))
        let first = try await downloader.loadData(origin.url("/a.png"))
        let second = try await downloader.loadData(origin.url("/a.png"), options: LoadRequestOptions(headers: [("X-Second", "1")]))
        #expect(first.data == Data(png))
        #expect(second.data == Data(png))
        let requests = origin.requests(to: "/a.png")
        #expect(requests.count == 2)
        #expect(requests.allSatisfy { $0.header("Via")?.contains("squid") == true }, "squid carried both requests")
        #expect(requests.last?.header("X-Second") == "1")
        try await downloader.shutdown()
        try await origin.shutdown()
        try await squid.stop()
    }

    @Test("behind the address guard, squid gets an allowed host by name; a refused one never leaves the process")
    func squidBehindTheGuard() async throws {
        let squid = try await Squid.start()
        let origin = try await OriginServer.start()
        origin.route("/a.png", .ok(png, contentType: "image/png"))
        // Squid resolves the name itself (from /etc/hosts); the guard judges its own lookup.
        let resolver = StaticHostResolver(["localhost": [IPAddress("127.0.0.1")!]], fallback: nil)
        let url = URL(string: "http://localhost:\(origin.port)/a.png")!
        let allowed = ImageDownloader(
            configuration: ImageDownloaderConfiguration(
                addressPolicy: AddressPolicy(allowedNetworks: [IPNetwork("127.0.0.1/32")!]), hostResolver: resolver,
                proxy: ProxySettings(all: squid.url), retryPolicy: .none))
        #expect(try await allowed.loadData(url).data == Data(png))
        #expect(origin.requests(to: "/a.png").first?.header("Host") == "localhost:\(origin.port)")
        try await allowed.shutdown()

        let guarded = ImageDownloader(
            configuration: ImageDownloaderConfiguration(
                addressPolicy: AddressPolicy(), hostResolver: resolver, proxy: ProxySettings(all: squid.url), retryPolicy: .none))
        let refused = await refusal { () async throws(WebImageError) in try await guarded.loadData(url) }
        #expect(refused?.code == .refusedAddress)
        #expect(refused?.message == "127.0.0.1 (localhost) is refused: loopback", "\(String(describing: refused))")
        #expect(origin.requestCount("/a.png") == 1, "only the allowed request reached the origin")
        try await guarded.shutdown()
        try await origin.shutdown()
        try await squid.stop()
    }

    @Test("a name sent on to a proxy must have every address allowed: the proxy may connect to any of them")
    func everyAddressBeforeTheProxy() async throws {
        let origin = try await OriginServer.start()
        let proxy = try await ForwardProxy.start()
        origin.route("/a.png", .ok(png, contentType: "image/png"))
        let resolver = StaticHostResolver(["mixed.test": [IPAddress("127.0.0.1")!, IPAddress("10.1.2.3")!]], fallback: nil)
        let policy = AddressPolicy(allowedNetworks: [IPNetwork("127.0.0.1/32")!])
        let url = URL(string: "http://mixed.test:\(origin.port)/a.png")!

        let proxied = ImageDownloader(
            configuration: ImageDownloaderConfiguration(
                addressPolicy: policy, hostResolver: resolver, proxy: ProxySettings(all: URL(string: proxy.url)!), retryPolicy: .none))
        let refused = await refusal { () async throws(WebImageError) in try await proxied.loadData(url) }
        #expect(refused?.code == .refusedAddress)
        #expect(refused?.message?.hasPrefix("10.1.2.3 (mixed.test) is refused") == true, "\(String(describing: refused))")
        #expect(proxy.requests.isEmpty)
        try await proxied.shutdown()

        // Connecting itself, the guard picks an allowed address of the name.
        let direct = ImageDownloader(
            configuration: ImageDownloaderConfiguration(addressPolicy: policy, hostResolver: resolver, retryPolicy: .none))
        #expect(try await direct.loadData(url).data == Data(png))
        try await direct.shutdown()
        try await proxy.shutdown()
        try await origin.shutdown()
    }

    @Test("a certificate that fails behind a proxy is explained through a tunnel of the diagnosis' own")
    func certificateDiagnosisThroughTheProxy() async throws {
        let origin = try await OriginServer.start(tls: true)
        origin.route("/a.png", .ok(png, contentType: "image/png"))
        let proxy = try await ForwardProxy.start()
        let downloader = ImageDownloader(
            configuration: ImageDownloaderConfiguration(proxy: ProxySettings(all: URL(string: proxy.url)!), retryPolicy: .none))
        let url = URL(string: "https://localhost:\(origin.port)/a.png")!
        let failure = await refusal { () async throws(WebImageError) in try await downloader.loadData(url) }
        #expect(failure?.code == .insecureConnection)
        #expect(
            failure?.message == "the certificate of localhost is not signed by a trusted authority (untrusted issuer)",
            "\(String(describing: failure))")
        #expect(
            proxy.requests == ["CONNECT localhost:\(origin.port)", "CONNECT localhost:\(origin.port)"],
            "the load's tunnel, then the diagnosis'")
        #expect(origin.requestCount("/a.png") == 0)
        try await downloader.shutdown()
        try await proxy.shutdown()
        try await origin.shutdown()
    }

    @Test("the proxy's credentials go with every forwarded request and stop at the proxy")
    func credentialsAndSchemes() async throws {
        let origin = try await OriginServer.start()
        let authorization = "Basic " + Data("user:s3cret".utf8).base64EncodedString()
        let proxy = try await ForwardProxy.start(requiredAuthorization: authorization)
        origin.route("/a.png", .ok(png, contentType: "image/png"))
        let proxyURL = URL(string: "http://user:s3cret@127.0.0.1:\(proxy.port)")!
        let downloader = ImageDownloader(
            configuration: ImageDownloaderConfiguration(proxy: ProxySettings(httpProxy: proxyURL), retryPolicy: .none))
        #expect(try await downloader.loadData(origin.url("/a.png")).data == Data(png))
        #expect(try await downloader.loadData(origin.url("/a.png?2")).data == Data(png))
        #expect(proxy.requests == ["GET \(origin.url("/a.png").absoluteString)", "GET \(origin.url("/a.png?2").absoluteString)"])
        #expect(origin.requests(to: "/a.png").allSatisfy { $0.header("Proxy-Authorization") == nil }, "the credentials stop at the proxy")
        try await downloader.shutdown()
        try await proxy.shutdown()
        try await origin.shutdown()
    }
}
