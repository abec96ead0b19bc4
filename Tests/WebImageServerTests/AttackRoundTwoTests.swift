import AsyncHTTPClient
import Foundation
import HTTPTypes
import InMemoryTracing
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing
import Tracing
import WebImage
import WebImageS3
import WebImageTesting
@testable import WebImageServer
import WebImageTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Issue 57: what the second attack on the proxy from outside found, each with the request that
/// showed it. Each test failed (or hung) before its fix.
@Suite("Proxy hardening, second round", .serialized)
struct AttackRoundTwoTests {
    private let jpeg = [UInt8](try! Fixture.data("gradient.jpg"))

    /// An SVG with a script, an event attribute and an external reference.
    private let hostileSVG = Array(
        """
        <svg xmlns="http://www.w3.org/2000/svg" width="4" height="4" onload="alert(1)">\
        <script>alert(2)</script><image href="http://127.0.0.1:1/x.png" width="4" height="4"/>\
        <rect width="4" height="4" fill="red"/></svg>
        """.utf8)

    @Test(
        "a FIFO, a device or a socket under the root is refused at once, not opened for reading; the server answers everything else meanwhile",
        .timeLimit(.minutes(1)))
    func specialFiles() async throws {
        let root = try TemporaryDirectory("local-fifo")
        #expect(mkfifo(root.path + "/pipe.png", 0o644) == 0)
        try FileManager.default.createSymbolicLink(atPath: root.path + "/null.png", withDestinationPath: "/dev/null")
        var configuration = ServerHarness.configuration()
        configuration.localFilesystemRoot = root.path
        try await ServerHarness.with(configuration) { harness in
            // Two at once: before, each held a cooperative thread in openat until a writer came,
            // and with both held the server answered nothing, /health included.
            async let first = harness.get(harness.signer.sign("/w:2/plain/local:///pipe.png@png"))
            async let second = harness.get(harness.signer.sign("/raw:1/plain/local:///pipe.png"))
            let answers = try await [first, second]
            #expect(answers.map(\.status) == [404, 404], "\(answers.map(\.text))")
            #expect(answers[0].text.contains("is not a file"))
            #expect(try await harness.get("/health").status == 200)
            // A link to a device outside the root is refused as leading outside it (404, as imgproxy
            // v4 answers a source it refuses).
            #expect(try await harness.get(harness.signer.sign("/w:2/plain/local:///null.png@png")).status == 404)
        }
    }

    @Test("raw:1 on a local file that is not an image is a 415, as an http source's and /info's are")
    func rawLocalNotImage() async throws {
        let root = try TemporaryDirectory("local-raw")
        try Data("secret: not an image\n".utf8).write(to: root.url.appendingPathComponent("notes.png"))
        try Data(jpeg).write(to: root.url.appendingPathComponent("photo.jpg"))
        var configuration = ServerHarness.configuration()
        configuration.localFilesystemRoot = root.path
        try await ServerHarness.inProcess(configuration) { harness throws in
            let refused = try await harness.get(harness.signer.sign("/raw:1/plain/local:///notes.png"))
            #expect(refused.status == 415 && !refused.text.contains("secret"), "\(refused.status) \(refused.text)")
            let image = try await harness.get(harness.signer.sign("/raw:1/plain/local:///photo.jpg"))
            #expect(image.status == 200 && image.body == Data(jpeg) && image.header("Content-Type") == "image/jpeg")
        }
    }

    @Test("an SVG answered as SVG (raw:1, skp:svg, --skip-processing-formats svg) carries a policy that runs nothing and is an attachment")
    func svgAnsweredAsSVG() async throws {
        var configuration = ServerHarness.configuration()
        configuration.skipProcessingFormats = [.svg]
        try await ServerHarness.with(configuration) { harness in
            harness.origin.route("/x.svg", .ok(hostileSVG, contentType: "image/svg+xml"))
            for options in ["raw:1", "w:4", "skp:svg"] {
                let answer = try await harness.get(harness.signedPlain(options, "/x.svg"))
                #expect(answer.status == 200 && answer.header("Content-Type") == "image/svg+xml", "\(options): \(answer.status)")
                let policy = answer.header("Content-Security-Policy") ?? ""
                #expect(policy.contains("default-src 'none'") && policy.contains("sandbox"), "\(options): \(policy)")
                #expect(answer.header("Content-Disposition")?.hasPrefix("attachment;") == true, "\(options)")
            }
            // Rasterised, the SVG's markup is gone: inline as asked, with the policy every answer
            // has (imgproxy's `setCSP`).
            let png = try await harness.get(harness.signedPlain("w:4", "/x.svg", extension: "png"))
            #expect(png.header("Content-Type") == "image/png")
            #expect(png.header("Content-Security-Policy") == "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox")
            #expect(png.header("Content-Disposition")?.hasPrefix("inline;") == true)
        }
    }

    @Test("the operations port has the public port's deadlines and client limit")
    func operationsPortLimits() async throws {
        var configuration = ServerHarness.configuration()
        configuration.operationsPort = 0
        configuration.readRequestTimeout = .milliseconds(300)
        configuration.maximumClients = 1
        try await ServerHarness.with(configuration) { harness in
            let port = await harness.server.operationsPort
            // Before, a half-sent header held the connection for ever.
            let partial = try await RawConnection.exchange(port: port, sending: Data("GET /health HTTP/1.1\r\nHost: a\r\n".utf8))
            #expect(partial.closed && partial.text.isEmpty)
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            let request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/health")
            #expect(try await client.execute(request, timeout: .seconds(10)).status == .ok)
            let limiter = try #require(harness.server.operationsConnectionLimiter)
            // The half-sent connection's close is counted on its event loop, perhaps after the
            // client's connection opened: the count settles at the one client kept alive.
            try await waitUntil("the operations listener paused at one client") { !limiter.isAccepting }
            let reads = try await limiter.listenerReads()
            #expect(reads == false, "one client kept alive: the limit")
            #expect(harness.server.connectionLimiter?.isAccepting == true, "counted apart from the public port")
            try await client.shutdown()
        }
    }

    @Test("an s3:// key with dot segments is refused before the bucket rules and before any connection")
    func s3DotSegments() async throws {
        #expect(S3Location(url: URL(string: "s3://public/../secret/x")!) == nil)
        #expect(S3Location(url: URL(string: "s3://public/a/%2E%2E/x")!) == nil, "decoded first")
        #expect(S3Location(url: URL(string: "s3://public/a..b/x")!)?.key == "a..b/x", "dots inside a name are a name")
        let endpoint = try RefusingPort()
        var configuration = ServerHarness.configuration()
        configuration.s3Sources = S3Sources(
            client: S3Configuration(
                endpoint: URL(string: "http://127.0.0.1:\(endpoint.port)")!, usesPathStyle: true,
                credentials: S3Credentials(accessKeyID: "a", secretAccessKey: "b")),
            allowedBuckets: ["public"])
        try await ServerHarness.inProcess(configuration) { harness throws in
            for source in ["s3://public/../secret/x", "s3://public/a/./x"] {
                let answer = try await harness.get(harness.signer.sign("/w:2/plain/\(source)@png"))
                #expect(answer.status == 400 && answer.text.contains("segments"), "\(source): \(answer.status) \(answer.text)")
            }
        }
    }

    @Test("a source's status labels a few series: the common ones, then the class")
    func sourceErrorKinds() {
        #expect(RemoteSources.failureKind(status: 404) == "http_404")
        #expect(RemoteSources.failureKind(status: 503) == "http_503")
        #expect(RemoteSources.failureKind(status: 418) == "http_4xx")
        #expect(RemoteSources.failureKind(status: 599) == "http_5xx")
        #expect(RemoteSources.failureKind(status: 999) == "http_other")
        #expect(Set((100...999).map(RemoteSources.failureKind)).count == 13, "900 statuses, 13 series")
    }

    @Test("tracestate within W3C's 32 members and 512 characters; several traceparent headers name no parent")
    func traceContextLimits() {
        let extractor = HTTPFieldsExtractor()
        var headers = HTTPFields()
        let members = (0..<1500).map { "v\($0)=\(String(repeating: "x", count: 8))" }
        headers[HTTPField.Name("tracestate")!] = members.joined(separator: ",")
        let kept = extractor.extract(key: "tracestate", from: headers) ?? ""
        #expect(kept.split(separator: ",").count == 32 && kept.count <= 512 && kept.hasPrefix("v0="), "\(kept.count)")
        var long = HTTPFields()
        long[HTTPField.Name("tracestate")!] = "a=" + String(repeating: "y", count: 400) + ",b=1,c=" + String(repeating: "z", count: 200)
        #expect(extractor.extract(key: "tracestate", from: long) == "b=1", "members over 128 characters go first")
        var twice = HTTPFields()
        let parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        twice.append(HTTPField(name: HTTPField.Name("traceparent")!, value: parent))
        #expect(extractor.extract(key: "traceparent", from: twice) == parent)
        twice.append(HTTPField(name: HTTPField.Name("traceparent")!, value: parent))
        #expect(extractor.extract(key: "traceparent", from: twice) == nil)
    }

    @Test("spans and access lines show a source without its user, password and query; a source without them as it came")
    func redactedPaths() async throws {
        let tracer = InMemoryTracer()
        try await ServerHarness.with(tracer: tracer) { harness in
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let source = harness.origin.url("/photo.jpg").absoluteString.replacingOccurrences(of: "://", with: "://user:hunter2@")
            let answer = try await harness.get(harness.signer.sign("/w:20/plain/\(source)%3Ftoken%3Dsecret42"))
            #expect(answer.status == 200 || answer.status == 404)
        }
        let server = try #require(tracer.finishedSpans.first { $0.kind == .server })
        guard case .string(let path)? = server.attributes["url.path"]?.toSpanAttribute() else {
            Issue.record("no url.path on the server span")
            return
        }
        #expect(path.hasPrefix("/w:20/plain/http://127.0.0.1:") && path.hasSuffix("/photo.jpg?…"), "\(path)")
        #expect(!path.contains("hunter2") && !path.contains("user") && !path.contains("secret42"), "\(path)")
        #expect(ProxyPath.withoutSecrets("/w:2/plain/http://a.test/b.jpg@png") == "/w:2/plain/http://a.test/b.jpg@png", "nothing to hide")
        let encoded = URLSigner.base64URL(Array("http://u:p@a.test/b.jpg?k=v".utf8))
        #expect(ProxyPath.withoutSecrets("/w:2/\(encoded).png") == "/w:2/plain/http://a.test/b.jpg?…", "a base64 source too")
    }

    @Test("LOCAL:/// is a local source whatever its case; a DPR, hinted or the URL's, over the result limit is scaled down, never refused")
    func schemeCaseAndHintedDPR() throws {
        let path = try ProxyPath(parsing: "/sig/w:2/plain/LOCAL:///a.png", rules: ProxyPath.Rules())
        #expect(path.source.scheme == ProxyPath.localScheme)
        let hinted = try OptionsParser().parse(["w:2000", "el:1"], hints: OptionsParser.ClientHints(dpr: ["8"], width: [nil]))
        let asked = try OptionsParser().parse(["w:2000", "el:1", "dpr:8"])
        for options in [hinted, asked] {
            // imgproxy's limitScale: the result, not the request, is kept within 8192.
            let plan = try ProcessingPlan(options: options, sourceWidth: 400, sourceHeight: 300)
            #expect(plan.resultWidth == 8192 && plan.resultHeight == 6144, "\(plan.resultWidth)x\(plan.resultHeight)")
        }
    }

    @Test("a fallback that cannot be fetched answers the source's error, not its own")
    func fallbackFailure() async throws {
        let refusing = try RefusingPort()
        var configuration = ServerHarness.configuration()
        configuration.fallbackImage = FallbackImage(source: .url(URL(string: "http://127.0.0.1:\(refusing.port)/fallback.png")!), status: 0)
        try await ServerHarness.inProcess(configuration) { harness throws in
            let answer = try await harness.get(harness.signedPlain("w:2", "/missing.jpg"))
            #expect(answer.status == 404 && answer.text.contains("answered 404"), "\(answer.status) \(answer.text)")
        }
    }

    @Test("refusals before parsing and /info answers are counted in the request metrics like every proxy request")
    func everyRequestCounted() async throws {
        var configuration = ServerHarness.configuration()
        configuration.secret = "s3cret"
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route("/photo.jpg", .ok(jpeg, contentType: "image/jpeg"))
            #expect(try await harness.get(harness.signedPlain("w:2", "/photo.jpg")).status == 403)
            let bearer = [("Authorization", "Bearer s3cret")]
            #expect(try await harness.get(harness.signedPlain("w:2", "/photo.jpg") + "?q=1", headers: bearer).status == 400)
            let info = "/info" + harness.signer.sign("/plain/\(harness.origin.url("/photo.jpg").absoluteString)")
            #expect(try await harness.get(info, headers: bearer).status == 200)
            let metrics = try await harness.get("/metrics").text
            for status in ["403", "400", "200"] {
                #expect(metrics.contains("webimage_server_requests_total{status=\"\(status)\"} 1"), "\(status)")
            }
        }
    }

    @Test("the access line's clock starts when the head is read off the connection; a client cannot set it")
    func arrivalStamp() throws {
        let channel = EmbeddedChannel(handler: RequestArrivalHandler())
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/health")
        head.headers.add(name: "X-Webimage-Arrival", value: "1")
        let before = DispatchTime.now().uptimeNanoseconds
        try channel.writeInbound(HTTPServerRequestPart.head(head))
        guard case .head(let stamped)? = try channel.readInbound(as: HTTPServerRequestPart.self) else {
            Issue.record("no head came through")
            return
        }
        let values = stamped.headers["X-Webimage-Arrival"]
        #expect(values.count == 1 && (UInt64(values[0]) ?? 0) >= before, "\(values)")
        #expect(ResponseStampMiddleware.milliseconds(since: before + 10_000_000_000) == 0, "a start after now is no time, not a wrap")
        _ = try channel.finish()
    }

    @Test("a source downloaded again is counted and logged")
    func repeatedSourceFetch() async throws {
        try await ServerHarness.inProcess { harness throws in
            // Not kept by the source cache: each variant downloads it again.
            harness.origin.route(
                "/photo.jpg", OriginResponse(headers: [("Content-Type", "image/jpeg"), ("Cache-Control", "no-store")], body: jpeg))
            let first = try await harness.get(harness.signedPlain("w:2", "/photo.jpg"))
            #expect(first.status == 200, "\(first.text)")
            #expect(try await harness.get(harness.signedPlain("w:3", "/photo.jpg")).status == 200)
            #expect(harness.origin.requestCount("/photo.jpg") == 2, "no-store: the source cache keeps nothing")
            #expect(try await harness.get("/metrics").text.contains("webimage_server_source_refetches_total 1"))
        }
        // A fetch that every request left is counted as cancelled: the origin was asked all the same.
        var configuration = ServerHarness.configuration()
        configuration.requestTimeout = .milliseconds(300)
        try await ServerHarness.inProcess(configuration) { harness throws in
            harness.origin.route("/stall.jpg", OriginResponse(delivery: .neverRespond))
            #expect(try await harness.get(harness.signedPlain("w:2", "/stall.jpg")).status == 504)
            var metrics = ""
            for _ in 0..<200 where !metrics.contains("kind=\"cancelled\"} 1") {
                metrics = try await harness.get("/metrics").text
            }
            #expect(metrics.contains("webimage_server_source_errors_total{kind=\"cancelled\"} 1"))
        }
    }
}
