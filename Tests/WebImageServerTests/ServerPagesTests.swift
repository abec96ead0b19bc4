import Foundation
import Testing
import WebImage
import WebImageTesting
@testable import WebImageCodecs
@testable import WebImageServer
import WebImageTestSupport

/// `/playground` and `/status` over HTTP, and the parts they are made of. What a browser does
/// with the pages is tested in `Tests/Browser`.
@Suite("Server pages")
struct ServerPagesTests {
    private let jpeg = [UInt8](try! Fixture.data("gradient.jpg"))

    @Test("the playground's rule: loopback clients, or anyone with the token; a proxied request is not loopback")
    func playgroundAccess() {
        let allowed = PageAccess.Decision.allowed
        #expect(PageAccess.playground(clientAddress: "127.0.0.1", forwarded: false, token: nil, presented: nil) == allowed)
        #expect(PageAccess.playground(clientAddress: "127.5.6.7", forwarded: false, token: nil, presented: nil) == allowed)
        #expect(PageAccess.playground(clientAddress: "::1", forwarded: false, token: nil, presented: nil) == allowed)
        #expect(PageAccess.playground(clientAddress: "::ffff:127.0.0.1", forwarded: false, token: nil, presented: nil) == allowed)
        for address in ["10.0.0.1", "192.168.1.20", "8.8.8.8", "2001:db8::1", "::ffff:10.0.0.1", "1270.0.0.1"] {
            #expect(PageAccess.playground(clientAddress: address, forwarded: false, token: nil, presented: nil) != allowed, "\(address)")
        }
        #expect(PageAccess.playground(clientAddress: nil, forwarded: false, token: nil, presented: nil) != allowed)
        #expect(
            PageAccess.playground(clientAddress: "127.0.0.1", forwarded: true, token: nil, presented: nil)
                == .refused("the playground answers loopback clients only; start the server with --playground-token to open it to others"))
        #expect(PageAccess.playground(clientAddress: "10.0.0.1", forwarded: true, token: "s3cret", presented: "s3cret") == allowed)
        #expect(
            PageAccess.playground(clientAddress: "127.0.0.1", forwarded: false, token: "s3cret", presented: "s3cre")
                == .refused("the playground token is wrong"))
        #expect(
            PageAccess.playground(clientAddress: "10.0.0.1", forwarded: false, token: "s3cret", presented: nil)
                == .refused("the playground needs its token (?token=... or X-Playground-Token)"))
    }

    @Test(
        "the client behind a proxy: the peer unless the proxy is trusted; then only the header the operator names, its right-most untrusted hop"
    )
    func clientBehindProxy() {
        let trusted = [IPNetwork("127.0.0.1/32")!]
        let realIP = PageAccess.Forwarding(realIP: "203.0.113.9")
        // A same-host proxy that sets only X-Real-IP was taken for a loopback client.
        #expect(PageAccess.client(peer: "127.0.0.1", forwarding: realIP, trustedProxies: []) == ("127.0.0.1", true))
        #expect(
            PageAccess.client(peer: "127.0.0.1", forwarding: realIP, trustedProxies: trusted, header: .realIP) == ("203.0.113.9", false))
        #expect(PageAccess.client(peer: "10.0.0.5", forwarding: realIP, trustedProxies: trusted, header: .realIP) == ("10.0.0.5", true))
        // Issue 57, item 3: behind a proxy that sets X-Forwarded-For (the shipped tier), a client's
        // own X-Real-IP: 127.0.0.1 was read first and opened the pages.
        let spoofed = PageAccess.Forwarding(forwardedFor: "203.0.113.9", realIP: "127.0.0.1")
        #expect(PageAccess.client(peer: "127.0.0.1", forwarding: spoofed, trustedProxies: trusted) == ("203.0.113.9", false))
        #expect(
            PageAccess.client(peer: "127.0.0.1", forwarding: PageAccess.Forwarding(realIP: "127.0.0.1"), trustedProxies: trusted)
                == (nil, true), "a trusted proxy that named no client in its header: an unknown client")
        // nginx's real_ip_recursive: hops the client wrote stand left of the ones trusted proxies added.
        #expect(
            PageAccess.client(
                peer: "127.0.0.1", forwarding: PageAccess.Forwarding(forwardedFor: "127.0.0.1, 198.51.100.1, 127.0.0.1"),
                trustedProxies: trusted) == ("198.51.100.1", false), "the right-most hop that is not a trusted proxy")
        #expect(
            PageAccess.client(peer: "127.0.0.1", forwarding: PageAccess.Forwarding(forwardedFor: "127.0.0.1"), trustedProxies: trusted)
                == ("127.0.0.1", false), "every hop trusted: the left-most")
        #expect(
            PageAccess.client(
                peer: "127.0.0.1", forwarding: PageAccess.Forwarding(forwarded: "for=192.0.2.60;proto=http, for=\"[2001:db8::1]:4711\""),
                trustedProxies: trusted, header: .forwarded) == ("2001:db8::1", false))
        #expect(PageAccess.client(peer: "127.0.0.1", forwarding: PageAccess.Forwarding(), trustedProxies: []) == ("127.0.0.1", false))
    }

    @Test("/status answers loopback clients, a trusted proxy's loopback client, or its token; others get 403")
    func statusAccess() async throws {
        var configuration = ServerHarness.configuration()
        configuration.statusToken = "st4tus"
        try await ServerHarness.with(configuration) { harness in
            #expect(try await harness.get("/status").status == 200)
            let proxied = [("X-Real-IP", "203.0.113.9")]
            let refused = try await harness.get("/status", headers: proxied)
            #expect(refused.status == 403 && refused.text.contains("--status-token") == false && refused.text.contains("token"))
            #expect(try await harness.get("/status/figures", headers: proxied).status == 403)
            #expect(try await harness.get("/status?token=st4tus", headers: proxied).status == 200)
            #expect(try await harness.get("/status/figures", headers: proxied + [("X-Status-Token", "st4tus")]).status == 200)
            #expect(try await harness.get("/status?token=wrong", headers: proxied).status == 403)
        }
        configuration.statusToken = nil
        configuration.playground = true
        configuration.trustedProxies = [IPNetwork("127.0.0.1/32")!]
        try await ServerHarness.with(configuration) { harness in
            // As the shipped nginx tier forwards (deploy/nginx: proxy_add_x_forwarded_for, no X-Real-IP).
            #expect(try await harness.get("/status", headers: [("X-Forwarded-For", "127.0.0.1")]).status == 200)
            let outside = try await harness.get("/status", headers: [("X-Forwarded-For", "203.0.113.9")])
            #expect(outside.status == 403 && outside.text.contains("--status-token"))
            // A remote client's own X-Real-IP, passed on by the tier beside the header it sets.
            let spoofed = [("X-Real-IP", "127.0.0.1"), ("X-Forwarded-For", "203.0.113.9")]
            #expect(try await harness.get("/status", headers: spoofed).status == 403)
            #expect(try await harness.get("/playground/sign?path=/w:1/plain/http://a/b", headers: spoofed).status == 403)
        }
        configuration.clientIPHeader = .realIP
        try await ServerHarness.with(configuration) { harness throws in
            #expect(try await harness.get("/status", headers: [("X-Real-IP", "127.0.0.1")]).status == 200)
            #expect(
                try await harness.get("/status", headers: [("X-Real-IP", "203.0.113.9"), ("X-Forwarded-For", "127.0.0.1")]).status == 403)
        }
    }

    @Test("the status board: rates and the status mix over a sliding window, nearest-rank percentiles, the slowest ten")
    func statusBoard() {
        let board = StatusBoard()
        func record(_ status: Int, _ milliseconds: Double, at second: Int, path: Substring = "/p") {
            board.record(status: status, milliseconds: milliseconds, path: path, bytes: 10, second: second)
        }
        for index in 1...100 { record(200, Double(index), at: 10) }
        for _ in 0..<20 { record(404, 1, at: 70) }
        record(503, 500, at: 100, path: "/slow")
        var snapshot = board.snapshot(now: 100)
        #expect(snapshot.minutes.first == [0, 0, 0, 20, 1], "seconds 41...100: twenty 404s and a 503")
        #expect(snapshot.minutes[1] == [0, 100, 0, 0, 0], "seconds 0...40 form the minute before")
        #expect(abs(snapshot.perSecondLastMinute - 21.0 / 60) < 1e-9)
        #expect(abs(snapshot.perSecondLastFiveMinutes - 121.0 / 101) < 1e-9)
        // 121 latencies: 21 of 1 ms, then 2...100, then 500.
        #expect(snapshot.p50 == 41)
        #expect(snapshot.p99 == 100)
        #expect(snapshot.slowest.count == 10)
        #expect(snapshot.slowest.first?.path == "/slow")
        #expect(snapshot.slowest.map(\.milliseconds) == [500] + (92...100).reversed().map(Double.init))

        snapshot = board.snapshot(now: 10 + StatusBoard.window)
        #expect(snapshot.minutes.reduce(0) { $0 + $1.reduce(0, +) } == 21, "second 10 has left the window")
        #expect(snapshot.slowest.map(\.milliseconds) == [500])
        #expect(board.snapshot(now: 100 + StatusBoard.window).p50 == nil, "nothing left")
        #expect(StatusBoard.percentile(0.95, of: (1...20).map(Double.init)) == 19)
        #expect(StatusBoard.percentile(0.5, of: []) == nil)
    }

    @Test("the exposition read back: names, labels with escapes, values; comments skipped")
    func metricsReading() {
        let reading = MetricsReading(
            text: """
                # TYPE webimage_server_requests_total counter
                webimage_server_requests_total{status="200"} 7
                webimage_server_requests_total{status="404"} 2
                webimage_server_cache_lookups_total{tier="result",result="hit"} 3
                odd{label="a \\"quoted\\", comma"} 1.5
                webimage_server_processing_duration_seconds_count 4
                not a sample
                """)
        #expect(reading.value("webimage_server_requests_total", ["status": "200"]) == 7)
        #expect(reading.total("webimage_server_requests_total") == 9)
        #expect(reading.value("webimage_server_cache_lookups_total", ["tier": "result", "result": "hit"]) == 3)
        #expect(reading.value("odd", ["label": "a \"quoted\", comma"]) == 1.5)
        #expect(reading.value("webimage_server_processing_duration_seconds_count") == 4)
        #expect(reading.value("missing") == 0)
        #expect(reading.samples.count == 5)
    }

    @Test("/playground is off unless configured; on, it serves the page, its demo images and signed paths to loopback clients")
    func playground() async throws {
        try await ServerHarness.with { harness in
            let page = try await harness.get("/playground")
            let demo = try await harness.get("/playground/demo/scene.jpg")
            #expect(page.status == 404 && demo.status != 200, "the proxy's answer to a path it cannot read")
        }
        var configuration = ServerHarness.configuration()
        configuration.playground = true
        try await ServerHarness.with(configuration) { harness in
            let page = try await harness.get("/playground")
            #expect(page.status == 200)
            #expect(page.header("Content-Type") == "text/html; charset=utf-8")
            #expect(page.text.contains("<option value=\"local:///playground/scene.jpg\" data-original=\"/playground/demo/scene.jpg\">"))
            #expect(page.text.contains("<option value=\"webp\">webp</option>"), "the formats this node writes")
            #expect(!page.text.contains("{{"), "every tag rendered")
            #expect(page.text.hasPrefix("<!DOCTYPE html>") && page.text.contains("<title>webimage playground</title>"))
            #expect(!page.text.contains("src=\"http"), "nothing loaded from elsewhere")

            let scene = try await harness.get("/playground/demo/scene.jpg")
            let image = try CodersManager.shared.decode(scene.body)
            #expect((image.pixelWidth, image.pixelHeight) == (1200, 800))

            let path = "/rs:fit:300:0/" + URLSigner.base64URL(Array("local:///playground/scene.jpg".utf8)) + ".png"
            let signing = try await harness.get(
                "/playground/sign?path=" + path.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
            #expect(signing.status == 200)
            let urls = try #require(try JSONSerialization.jsonObject(with: signing.body) as? [String: String])
            #expect(urls["signed"] == harness.signer.sign(path))
            #expect(urls["unsafe"] == nil, "unsigned URLs are refused by this node")
            let result = try await harness.get(try #require(urls["signed"]))
            #expect(result.status == 200)
            let processed = try CodersManager.shared.decode(result.body)
            #expect((processed.pixelWidth, processed.pixelHeight) == (300, 200))
            #expect(try await harness.get("/playground/sign").status == 400)

            let proxied = try await harness.get("/playground", headers: [("X-Forwarded-For", "203.0.113.9")])
            #expect(proxied.status == 403)
            #expect(proxied.text.contains("loopback clients only"))
            #expect(try await harness.get("/playground/sign?path=/a", headers: [("Forwarded", "for=203.0.113.9")]).status == 403)
        }
        configuration.playgroundToken = "s3cret"
        try await ServerHarness.with(configuration) { harness in
            let forwarded = ("X-Forwarded-For", "203.0.113.9")
            let withoutToken = try await harness.get("/playground", headers: [forwarded])
            let withToken = try await harness.get("/playground?token=s3cret", headers: [forwarded])
            let signing = try await harness.get("/playground/sign?path=/a", headers: [forwarded, ("X-Playground-Token", "s3cret")])
            let wrong = try await harness.get("/playground?token=wrong")
            #expect(withoutToken.status == 403 && withToken.status == 200 && signing.status == 200 && wrong.status == 403)
        }
    }

    @Test("local sources are the playground's demo images only")
    func localSources() async throws {
        try await ServerHarness.with { harness in
            let path = harness.signer.sign("/w:10/" + URLSigner.base64URL(Array("local:///playground/scene.jpg".utf8)))
            let answer = try await harness.get(path)
            #expect(answer.status == 404)
            #expect(answer.text.contains("no local source /playground/scene.jpg"))
        }
    }

    @Test("/status shows the counters /metrics exports, source errors by kind and the slowest paths without signatures")
    func status() async throws {
        try await ServerHarness.with { harness in
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            harness.origin.route("/gone.jpg", .status(404))
            for width in [10, 20, 30] { #expect(try await harness.get(harness.signedPlain("w:\(width)", "/photo.jpg")).status == 200) }
            #expect(try await harness.get(harness.signedPlain("w:10", "/photo.jpg")).status == 200)
            #expect(try await harness.get(harness.signedPlain("w:10", "/gone.jpg")).status == 404)
            #expect(try await harness.get(harness.signedPlain("w:abc", "/photo.jpg")).status == 400)

            let page = try await harness.get("/status")
            #expect(page.status == 200)
            #expect(page.text.contains("<main id=\"figures\">") && page.text.contains("<title>webimage status</title>"))
            let figures = try await harness.get("/status/figures").text
            let metrics = MetricsReading(text: try await harness.get("/metrics").text)
            for status in ["200", "400", "404"] {
                let count = Int(metrics.value("webimage_server_requests_total", ["status": status]))
                #expect(figures.contains("id=\"status-\(status)\">\(count)<"), "status \(status): \(count)")
            }
            #expect(figures.contains("id=\"status-200\">4<"))
            #expect(figures.contains("id=\"requests-total\">6<"))
            #expect(figures.contains("id=\"source-error-http_404\">1<"))
            #expect(metrics.value("webimage_server_source_errors_total", ["kind": "http_404"]) == 1)
            #expect(figures.contains("id=\"processed\">3<"))
            #expect(figures.contains("id=\"hits-path\">1<"), "the repeated path")
            #expect(figures.contains("/w:10/http://127.0.0.1:\(harness.origin.port)/…"), "slow paths listed, as options and host")
            #expect(!figures.contains("photo.jpg") && !figures.contains("/plain/"), "never the source's path")
            #expect(!figures.contains(String(harness.signedPlain("w:10", "/photo.jpg").split(separator: "/")[0])), "without signatures")
            #expect(figures.contains("1 key(s), 32-byte signatures"))
            #expect(!figures.contains("736563726574"), "no key shown")
            #expect(metrics.value("webimage_server_request_duration_seconds_count") == 6)
        }
        try await ServerHarness.with { harness in
            // A source with credentials and a token in its query: /status shows neither.
            harness.origin.route("/secret.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let source = "http://user:hunter2@127.0.0.1:\(harness.origin.port)/secret.jpg?token=abc123"
            let encoded = URLSigner.base64URL(Array(source.utf8))
            _ = try await harness.get(harness.signer.sign("/w:10/\(encoded)"))
            _ = try await harness.get(harness.signer.sign("/w:11/plain/" + source.replacingOccurrences(of: "?", with: "%3F")))
            let figures = try await harness.get("/status/figures").text
            for secret in ["hunter2", "abc123", "user", "secret.jpg", encoded] {
                #expect(!figures.contains(secret), "\(secret) on /status")
            }
            #expect(figures.contains("/w:10/http://127.0.0.1:\(harness.origin.port)/…"))
        }
        var configuration = ServerHarness.configuration()
        configuration.statusPage = false
        try await ServerHarness.with(configuration) { harness in
            let page = try await harness.get("/status")
            #expect(page.status == 404)
        }
    }
}
