import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Testing
import WebImageTesting
@testable import WebImageDownloader
import WebImageTestSupport

/// The address guard with real connections, all on 127.0.0.1. Names resolve through a
/// ``StaticHostResolver`` (no system lookup), so that a name can lead to loopback as DNS
/// rebinding would; a refusal is shown to come before any connection by the origin's own log.
@Suite("Address guard")
struct AddressGuardTests {
    let png: [UInt8]

    init() throws {
        png = [UInt8](try Fixture.data("gradient-rgba.png"))
    }

    /// Every name used here resolves to 127.0.0.1, and nothing else resolves.
    private let resolver = StaticHostResolver(
        ["images.test": [IPAddress("127.0.0.1")!], "rebound.test": [IPAddress("127.0.0.1")!], "other.test": [IPAddress("127.0.0.1")!]],
        fallback: nil)

    private func withGuardedDownloader(_ policy: AddressPolicy, _ body: (OriginServer, ImageDownloader) async throws -> Void)
        async throws
    {
        try await withDownloader(
            ImageDownloaderConfiguration(addressPolicy: policy, hostResolver: resolver, retryPolicy: .none), body)
    }

    private func refusal(_ load: () async throws(WebImageError) -> LoadedData) async -> WebImageError? {
        do {
            _ = try await load()
            return nil
        } catch {
            return error
        }
    }

    private func connections(_ origin: OriginServer) -> Int {
        origin.events.filter { if case .connectionOpened = $0 { true } else { false } }.count
    }

    @Test("the default policy refuses loopback, by address and by a name that resolves to it, before any connection")
    func refusesLoopback() async throws {
        try await withGuardedDownloader(AddressPolicy()) { origin, downloader in
            origin.route("/a.png", .ok(png, contentType: "image/png"))
            let byAddress = await refusal { () async throws(WebImageError) in try await downloader.loadData(origin.url("/a.png")) }
            #expect(byAddress?.code == .refusedAddress)
            #expect(byAddress?.message == "127.0.0.1 is refused: loopback")
            #expect(byAddress?.refusal == .addressPolicy(rule: "loopback"), "the rule as a value")
            #expect(byAddress?.isTransient == false, "a refusal is permanent")
            let byName = await refusal { () async throws(WebImageError) in
                try await downloader.loadData(URL(string: "http://rebound.test:\(origin.port)/a.png")!)
            }
            #expect(byName?.code == .refusedAddress)
            #expect(byName?.message == "127.0.0.1 (rebound.test) is refused: loopback", "\(String(describing: byName))")
            #expect(byName?.refusal == .addressPolicy(rule: "loopback"))
            #expect(connections(origin) == 0, "nothing reached the origin, which would have answered")
            #expect(origin.requestCount("/a.png") == 0)
        }
    }

    @Test("an allowed address is relayed through the guard, with keep-alive")
    func allowedThroughTheGuard() async throws {
        try await withGuardedDownloader(AddressPolicy(allowedNetworks: [IPNetwork("127.0.0.1/32")!])) { origin, downloader in
            origin.route("/a.png", .ok(png, contentType: "image/png"))
            let url = URL(string: "http://images.test:\(origin.port)/a.png")!
            let first = try await downloader.loadData(url)
            let second = try await downloader.loadData(url, options: LoadRequestOptions(headers: [("X-Second", "1")]))
            #expect(first.data == Data(png))
            #expect(second.data == Data(png))
            #expect(origin.requestCount("/a.png") == 2)
            #expect(connections(origin) == 1, "the second request reused the guarded connection")
            let host = origin.requests(to: "/a.png").first?.headers.first { $0.name.lowercased() == "host" }?.value
            #expect(host == "images.test:\(origin.port)", "the request names the host, not the address")
        }
    }

    @Test("a redirect from an allowed origin to a refused address is refused at the hop")
    func redirectToRefusedAddress() async throws {
        // images.test is allowed by name; other.test resolves to the same origin, which would
        // answer, but loopback is refused for it.
        try await withGuardedDownloader(AddressPolicy(allowedHosts: ["images.test"])) { origin, downloader in
            origin.route("/secret.png", .ok(png, contentType: "image/png"))
            origin.route("/by-name", .redirect(to: "http://other.test:\(origin.port)/secret.png"))
            origin.route("/by-address", .redirect(to: "http://127.0.0.1:\(origin.port)/secret.png"))
            origin.route("/fine", .redirect(to: "/secret.png"))
            let base = "http://images.test:\(origin.port)"
            let byName = await refusal { () async throws(WebImageError) in try await downloader.loadData(URL(string: base + "/by-name")!) }
            #expect(byName?.code == .refusedAddress)
            #expect(byName?.message == "127.0.0.1 (other.test) is refused: loopback")
            let byAddress = await refusal { () async throws(WebImageError) in
                try await downloader.loadData(URL(string: base + "/by-address")!)
            }
            #expect(byAddress?.code == .refusedAddress)
            #expect(origin.requestCount("/secret.png") == 0, "neither hop reached the refused target")
            let fine = try await downloader.loadData(URL(string: base + "/fine")!)
            #expect(fine.url == URL(string: base + "/secret.png"), "a hop to the allowed host is followed")
        }
    }

    @Test("a denied host is refused before it is resolved; a name that does not resolve cannot connect")
    func deniedAndUnresolved() async throws {
        try await withGuardedDownloader(AddressPolicy(allowedNetworks: [IPNetwork("127.0.0.1/32")!], deniedHosts: ["images.test"])) {
            origin, downloader in
            let denied = await refusal { () async throws(WebImageError) in
                try await downloader.loadData(URL(string: "http://images.test:\(origin.port)/a.png")!)
            }
            #expect(denied?.code == .refusedAddress)
            #expect(denied?.message == "images.test is refused: denied host images.test")
            let unknown = await refusal { () async throws(WebImageError) in
                try await downloader.loadData(URL(string: "http://nowhere.test:\(origin.port)/a.png")!)
            }
            #expect(unknown?.code == .cannotConnect, "\(String(describing: unknown))")
            #expect(unknown?.message?.contains("cannot resolve nowhere.test") == true)
            #expect(connections(origin) == 0)
        }
    }

    @Test("TLS is end to end through the guard: the certificate is checked against the host name")
    func tlsThroughTheGuard() async throws {
        let origin = try await OriginServer.start(tls: true)
        origin.route("/a.png", .ok(png, contentType: "image/png"))
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.additionalTrustRoots = [
            .certificates([try NIOSSLCertificate(bytes: Array(try TestCertificate.certificatePEM().utf8), format: .pem)])
        ]
        let resolver = StaticHostResolver(["localhost": [IPAddress("127.0.0.1")!], "wrong.test": [IPAddress("127.0.0.1")!]], fallback: nil)
        let downloader = ImageDownloader(
            configuration: ImageDownloaderConfiguration(
                addressPolicy: AddressPolicy(allowedNetworks: [IPNetwork("127.0.0.1/32")!]), hostResolver: resolver, tlsConfiguration: tls,
                retryPolicy: .none))
        let named = try await downloader.loadData(URL(string: "https://localhost:\(origin.port)/a.png")!)
        #expect(named.data == Data(png))
        let mismatch = await refusal { () async throws(WebImageError) in
            try await downloader.loadData(URL(string: "https://wrong.test:\(origin.port)/a.png")!)
        }
        #expect(mismatch?.code == .insecureConnection)
        #expect(mismatch?.message == "the certificate of wrong.test does not name it (name mismatch)")
        #expect(mismatch?.isTransient == false)
        try await downloader.shutdown()
        try await origin.shutdown()
    }

    @Test("HTTPS behind the guard and a proxy: a CONNECT to the allowed address, never the name; the proxy's refusal is the error")
    func tlsThroughTheGuardAndAProxy() async throws {
        let origin = try await OriginServer.start(tls: true)
        origin.route("/a.png", .ok(png, contentType: "image/png"))
        let proxy = try await ForwardProxy.start()
        let authorization = "Basic " + Data("user:s3cret".utf8).base64EncodedString()
        let strict = try await ForwardProxy.start(requiredAuthorization: authorization)
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.additionalTrustRoots = [
            .certificates([try NIOSSLCertificate(bytes: Array(try TestCertificate.certificatePEM().utf8), format: .pem)])
        ]
        let resolver = StaticHostResolver(["localhost": [IPAddress("127.0.0.1")!]], fallback: nil)
        func downloader(through proxy: URL) -> ImageDownloader {
            ImageDownloader(
                configuration: ImageDownloaderConfiguration(
                    addressPolicy: AddressPolicy(allowedNetworks: [IPNetwork("127.0.0.1/32")!]), hostResolver: resolver,
                    proxy: ProxySettings(all: proxy), tlsConfiguration: tls, retryPolicy: .none))
        }
        let url = URL(string: "https://localhost:\(origin.port)/a.png")!

        let tunnelled = downloader(through: URL(string: proxy.url)!)
        #expect(try await tunnelled.loadData(url).data == Data(png), "TLS to the origin's name, inside the tunnel")
        #expect(proxy.requests == ["CONNECT 127.0.0.1:\(origin.port)"])
        try await tunnelled.shutdown()

        let refused = downloader(through: URL(string: strict.url)!)
        let failure = await refusal { () async throws(WebImageError) in try await refused.loadData(url) }
        #expect(failure?.message?.contains("the proxy answered CONNECT with HTTP/1.1 407") == true, "\(String(describing: failure))")
        #expect(strict.requests == ["CONNECT 127.0.0.1:\(origin.port)"])
        #expect(origin.requestCount("/a.png") == 1, "only the tunnelled load reached the origin")
        try await refused.shutdown()
        try await strict.shutdown()
        try await proxy.shutdown()
        try await origin.shutdown()
    }

    @Test("the guard's SOCKS listener closes connections from other processes before the handshake; its own work")
    func guardServesOnlyItsProcess() async throws {
        let origin = try await OriginServer.start()
        let egress = try EgressGuard.start(
            policy: AddressPolicy(allowedNetworks: [IPNetwork("127.0.0.0/8")!]), upstream: nil, resolver: resolver,
            connectTimeout: .seconds(2))
        // Another process offers "no authentication" and asks for a connection to the origin.
        let script = """
            import socket, sys
            s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
            try:
                s.sendall(bytes([5, 1, 0]))
                answer = s.recv(16)
                print("answer", answer.hex() if answer else "closed")
            except ConnectionResetError:
                print("answer closed")
            """
        let outsider = try ChildProcess(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script, egress.host, String(egress.port)])
        _ = try await outsider.waitForExit()
        #expect(outsider.lines == ["answer closed"], "\(outsider.lines)")
        #expect(connections(origin) == 0)
        // This process's own downloader goes through the same guard.
        try await withGuardedDownloader(AddressPolicy(allowedNetworks: [IPNetwork("127.0.0.0/8")!])) { origin, downloader in
            origin.route("/a.png", .ok(png, contentType: "image/png"))
            let loaded = try await downloader.loadData(origin.url("/a.png"))
            #expect(loaded.data.count == png.count)
        }
        await egress.shutdown()
        try await origin.shutdown()
    }

    @Test("clients released without a shutdown close the guard's listeners on their event loops, with no task of their own")
    func releasedClientsCloseTheGuard() async throws {
        var clients: DownloaderClients? = DownloaderClients(
            configuration: ImageDownloaderConfiguration(addressPolicy: AddressPolicy(allowedNetworks: [IPNetwork("127.0.0.0/8")!])),
            base: HTTPClient.Configuration(), external: nil)
        let egress = try #require(clients?.egress)
        clients = nil
        // Closed by the release itself: nothing else closes them, and the wait is bounded.
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        let closed = loop.makePromise(of: Void.self)
        egress.listenersClosed.cascade(to: closed)
        let deadline = loop.scheduleTask(in: .seconds(10)) { closed.fail(WebImageError(.timedOut, "the listeners stayed open")) }
        try await closed.futureResult.get()
        deadline.cancel()
    }

    @Test("a downloader on an application's own client refuses to load unguarded when given a policy")
    func failsClosedWithAnExternalClient() async throws {
        let origin = try await OriginServer.start()
        origin.route("/a.png", .ok(png, contentType: "image/png"))
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let downloader = ImageDownloader(
            configuration: ImageDownloaderConfiguration(addressPolicy: AddressPolicy(refusesSpecialAddresses: false), retryPolicy: .none),
            httpClient: client)
        let error = await refusal { () async throws(WebImageError) in try await downloader.loadData(origin.url("/a.png")) }
        #expect(error?.code == .refusedAddress)
        #expect(connections(origin) == 0)
        try await downloader.shutdown()
        try await client.shutdown()
        try await origin.shutdown()
    }
}
