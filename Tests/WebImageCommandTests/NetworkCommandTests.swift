import Foundation
import Testing
import WebImage
import WebImageTesting
import WebImageTestSupport

/// `webimage fetch` through the address guard, proxies (from the environment as curl reads it,
/// or `--proxy`), private certificate authorities and client certificates; all on 127.0.0.1.
@Suite("webimage network options")
struct NetworkCommandTests {
    typealias Workspace = CommandWorkspace

    let png: [UInt8]

    init() throws {
        png = [UInt8](try Fixture.data("gradient-rgba.png"))
    }

    /// The proxy variables of the environment the tests run in are not the test's business.
    private static let noProxyEnvironment = Dictionary(
        uniqueKeysWithValues: ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"]
            .map { ($0, "") })

    private func run(_ workspace: Workspace, _ arguments: [String], environment: [String: String] = [:]) async throws
        -> CommandRun
    {
        try await workspace.run(
            ["fetch", "--no-cache", "--json"] + arguments, environment: Self.noProxyEnvironment.merging(environment) { $1 })
    }

    private func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    private func connections(_ origin: OriginServer) -> Int {
        origin.events.filter { if case .connectionOpened = $0 { true } else { false } }.count
    }

    @Test("--block-private-addresses refuses the loopback origin before connecting; --allow-address lets it through")
    func blockPrivateAddresses() async throws {
        let origin = try await OriginServer.start()
        let workspace = try Workspace()
        origin.route("/a.png", .ok(png, contentType: "image/png"))
        origin.route("/moved", .redirect(to: "/a.png", status: 301))
        let refused = try await run(workspace, [origin.url("/a.png").absoluteString, "--block-private-addresses"])
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("refusedAddress: 127.0.0.1 is refused: loopback"), "\(refused.standardError)")
        #expect(connections(origin) == 0)
        let allowed = try await run(
            workspace, [origin.url("/moved").absoluteString, "--block-private-addresses", "--allow-address", "127.0.0.1/32"])
        #expect(allowed.status == 0, "\(allowed.standardError)")
        let report = try #require(allowed.jsonLines().first)
        #expect(report["finalURL"] as? String == origin.url("/a.png").absoluteString, "fetch --json reports the URL after redirects")
        let usage = try await run(workspace, [origin.url("/a.png").absoluteString, "--allow-address", "127.0.0.1/33"])
        #expect(usage.status == 2, "a malformed CIDR is a usage error")
        try await origin.shutdown()
    }

    @Test("HTTP_PROXY and --proxy send requests through the proxy; NO_PROXY and --noproxy bypass it")
    func forwardProxy() async throws {
        let origin = try await OriginServer.start()
        let proxy = try await ForwardProxy.start()
        let workspace = try Workspace()
        origin.route("/a.png", .ok(png, contentType: "image/png"))
        let url = origin.url("/a.png").absoluteString

        let viaEnvironment = try await run(workspace, [url], environment: ["HTTP_PROXY": proxy.url])
        #expect(viaEnvironment.status == 0, "\(viaEnvironment.standardError)")
        #expect(proxy.requests == ["GET \(url)"], "plain HTTP goes to the proxy in absolute form, as curl sends it")
        let lowerCase = try await run(workspace, [url], environment: ["http_proxy": proxy.url])
        #expect(lowerCase.status == 0, "\(lowerCase.standardError)")
        #expect(proxy.requests.count == 2)
        let bypassed = try await run(workspace, [url], environment: ["HTTP_PROXY": proxy.url, "NO_PROXY": "localhost,127.0.0.0/8"])
        #expect(bypassed.status == 0, "\(bypassed.standardError)")
        #expect(proxy.requests.count == 2, "NO_PROXY matched the origin's address")
        let underCGI = try await run(workspace, [url], environment: ["HTTP_PROXY": proxy.url, "REQUEST_METHOD": "GET"])
        #expect(underCGI.status == 0, "\(underCGI.standardError)")
        #expect(proxy.requests.count == 2, "HTTP_PROXY is ignored under CGI, as curl does")
        let flag = try await run(workspace, [url, "--proxy", proxy.url])
        #expect(flag.status == 0, "\(flag.standardError)")
        #expect(proxy.requests.count == 3)
        let flagBypassed = try await run(workspace, [url, "--proxy", proxy.url, "--noproxy", "127.0.0.1"])
        #expect(flagBypassed.status == 0, "\(flagBypassed.standardError)")
        #expect(proxy.requests.count == 3)

        let guarded = try await ForwardProxy.start(requiredAuthorization: "Basic " + Data("user:s3cret".utf8).base64EncodedString())
        let withCredentials = try await run(workspace, [url, "--proxy", "http://user:s3cret@127.0.0.1:\(guarded.port)"])
        #expect(withCredentials.status == 0, "\(withCredentials.standardError)")
        let withoutCredentials = try await run(workspace, [url, "--proxy", guarded.url])
        #expect(withoutCredentials.status == 1, "the proxy answered 407")
        #expect(guarded.requests.count == 2)
        try await guarded.shutdown()
        try await proxy.shutdown()
        try await origin.shutdown()
    }

    @Test("a private CA: refused without --cacert (untrusted issuer), accepted with it, through an HTTPS proxy too")
    func privateCertificateAuthority() async throws {
        let origin = try await OriginServer.start(tls: true)
        let proxy = try await ForwardProxy.start()
        let workspace = try Workspace()
        origin.route("/a.png", .ok(png, contentType: "image/png"))
        let url = "https://localhost:\(origin.port)/a.png"
        try write(try TestCertificate.certificatePEM(.server), to: workspace.path("ca.pem"))

        let untrusted = try await run(workspace, [url])
        #expect(untrusted.status == 1)
        #expect(
            untrusted.standardError.contains(
                "insecureConnection: the certificate of localhost is not signed by a trusted authority (untrusted issuer)"),
            "\(untrusted.standardError)")
        let trusted = try await run(workspace, [url, "--cacert", workspace.path("ca.pem")])
        #expect(trusted.status == 0, "\(trusted.standardError)")
        let tunnelled = try await run(workspace, [url, "--cacert", workspace.path("ca.pem")], environment: ["HTTPS_PROXY": proxy.url])
        #expect(tunnelled.status == 0, "\(tunnelled.standardError)")
        #expect(proxy.requests == ["CONNECT localhost:\(origin.port)"])
        try await proxy.shutdown()
        try await origin.shutdown()
    }

    @Test("an expired certificate is named as expired, even when its issuer is trusted")
    func expired() async throws {
        let origin = try await OriginServer.start(tls: true, certificate: .expiredServer)
        let workspace = try Workspace()
        origin.route("/a.png", .ok(png, contentType: "image/png"))
        try write(try TestCertificate.certificatePEM(.expiredServer), to: workspace.path("ca.pem"))
        let failed = try await run(workspace, ["https://localhost:\(origin.port)/a.png", "--cacert", workspace.path("ca.pem")])
        #expect(failed.status == 1)
        #expect(failed.standardError.contains("the certificate of localhost expired on"), "\(failed.standardError)")
        #expect(failed.standardError.contains("(expired)"))
        try await origin.shutdown()
    }

    @Test("mutual TLS: the origin accepts --cert and --key and refuses a client without them")
    func mutualTLS() async throws {
        let origin = try await OriginServer.start(tls: true, requiresClientCertificate: true)
        let workspace = try Workspace()
        origin.route("/a.png", .ok(png, contentType: "image/png"))
        try write(try TestCertificate.certificatePEM(.server), to: workspace.path("ca.pem"))
        try write(try TestCertificate.certificatePEM(.client), to: workspace.path("client.pem"))
        try write(try TestCertificate.privateKeyPEM(.client), to: workspace.path("client.key"))
        let url = "https://localhost:\(origin.port)/a.png"
        let accepted = try await run(
            workspace,
            [url, "--cacert", workspace.path("ca.pem"), "--cert", workspace.path("client.pem"), "--key", workspace.path("client.key")])
        #expect(accepted.status == 0, "\(accepted.standardError)")
        #expect(origin.requestCount("/a.png") == 1)
        let refused = try await run(workspace, [url, "--cacert", workspace.path("ca.pem")])
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("insecureConnection"), "\(refused.standardError)")
        #expect(origin.requestCount("/a.png") == 1, "no request got past the handshake")
        let usage = try await run(workspace, [url, "--cert", workspace.path("client.pem")])
        #expect(usage.status == 2, "--cert without --key is a usage error")
        try await origin.shutdown()
    }

    @Test("behind the guard a plain HTTP request reaches the proxy in absolute form only once every address of its host is allowed")
    func guardThroughProxy() async throws {
        let origin = try await OriginServer.start()
        let proxy = try await ForwardProxy.start(requiredAuthorization: "Basic " + Data("user:s3cret".utf8).base64EncodedString())
        let workspace = try Workspace()
        origin.route("/a.png", .ok(png, contentType: "image/png"))
        let environment = ["HTTP_PROXY": "http://user:s3cret@127.0.0.1:\(proxy.port)"]
        let fetched = try await run(
            workspace, ["http://localhost:\(origin.port)/a.png", "--block-private-addresses", "--allow-address", "127.0.0.1/32"],
            environment: environment)
        #expect(fetched.status == 0, "\(fetched.standardError)")
        // The name, not the address: the proxy puts it in the Host header it sends on.
        #expect(proxy.requests == ["GET http://localhost:\(origin.port)/a.png"])
        let refused = try await run(
            workspace, ["http://localhost:\(origin.port)/a.png", "--block-private-addresses"], environment: environment)
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("refused"), "\(refused.standardError)")
        #expect(proxy.requests.count == 1, "the refused request never reached the proxy")
        try await proxy.shutdown()
        try await origin.shutdown()
    }

    @Test("prefetch --per-host 1: the origin sees each response end before the host's next request")
    func prefetchPerHost() async throws {
        let origin = try await OriginServer.start()
        let workspace = try Workspace()
        // Each answer waits 50 ms, so that without the limit the four requests would overlap.
        var slow = OriginResponse.ok(png, contentType: "image/png")
        slow.headerDelay = .milliseconds(50)
        for index in 0..<4 { origin.route("/\(index).png", slow) }
        try write((0..<4).map { origin.url("/\($0).png").absoluteString }.joined(separator: "\n"), to: workspace.path("urls.txt"))
        let run = try await workspace.run(
            ["prefetch", "-i", workspace.path("urls.txt"), "-j", "8", "--per-host", "1", "--per-host-rate", "100", "--json"],
            environment: Self.noProxyEnvironment)
        #expect(run.status == 0, "\(run.standardError)")
        var running = 0
        var most = 0
        for event in origin.events {
            switch event {
            case .requestReceived: running += 1
            case .responseFinished: running -= 1
            default: continue
            }
            most = max(most, running)
        }
        #expect(origin.requests.count == 4)
        #expect(most == 1, "one request at a time for the one host, though -j allowed 8")
        let usage = try await workspace.run(["prefetch", "-i", workspace.path("urls.txt"), "--per-host", "0"])
        #expect(usage.status == 2)
        try await origin.shutdown()
    }

    @Test("fetch --respect-cache-control revalidates a stale cached image; without it the cached image is used as is")
    func respectCacheControl() async throws {
        let origin = try await OriginServer.start()
        let workspace = try Workspace()
        origin.route(
            "/a.png", OriginResponse(headers: [("Content-Type", "image/png"), ("Cache-Control", "no-cache")], body: png, etag: "\"v1\""))
        let url = origin.url("/a.png").absoluteString
        for _ in 0..<2 {
            let run = try await workspace.run(["fetch", url, "--json"], environment: Self.noProxyEnvironment)
            #expect(run.status == 0)
        }
        #expect(origin.requestCount("/a.png") == 1, "SDWebImage's rule: the cached image is used")
        let revalidated = try await workspace.run(
            ["fetch", url, "--json", "--respect-cache-control"], environment: Self.noProxyEnvironment)
        #expect(revalidated.status == 0, "\(revalidated.standardError)")
        #expect(origin.requests(to: "/a.png").last?.header("If-None-Match") == "\"v1\"")
        #expect(try #require(revalidated.jsonLines().first)["source"] as? String == "disk", "the 304 kept the cached copy")
        try await origin.shutdown()
    }
}
