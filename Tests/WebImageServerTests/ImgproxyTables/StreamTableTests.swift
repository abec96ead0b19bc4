import Foundation
import Testing
import WebImage
import WebImageTestSupport
import WebImageTesting

/// imgproxy's stream handler tests (`handlers/stream/handler_test.go`, v4 eef3b312), which answer
/// `raw`, and the headers its response writer puts on every answer (`server/responsewriter/writer.go`).
/// Rows that do not hold here, and why: `TestHandlerCookiePassthrough` and the `Passthrough` rows of
/// `TestHandlerCacheControl` (`IMGPROXY_COOKIE_PASSTHROUGH`, `IMGPROXY_CACHE_CONTROL_PASSTHROUGH`:
/// a source is fetched once for every client, coalesced and cached, so no client's cookies go
/// with it and the source's lifetime is not the result's); the `Accept-Encoding` and `Range` of
/// `TestHandlerRequestHeadersPassthrough` and the `Accept-Ranges` of `...ResponseHeadersPassthrough`
/// (the source cache keeps whole, decoded bodies, so neither a part nor an encoding is passed on).
@Suite("imgproxy's tables: raw streaming (handlers/stream/handler_test.go)", .serialized)
struct ImgproxyStreamTableTests {
    static let policy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox"

    @Test("the basic request, the source's validators passed through both ways, Content-Disposition, Cache-Control, the policy, errors")
    func raw() async throws {
        let png = [UInt8](try Fixture.data("gradient-rgba.png"))
        let october2015 = "Wed, 21 Oct 2015 07:28:00 GMT"
        try await ServerHarness.inProcess { harness throws in
            // TestHandlerBasicRequest and TestHandlerSecurityHeaders.
            harness.origin.route("/test1.png", .ok(png, contentType: "image/png"))
            let basic = try await harness.get(harness.signedPlain("raw:1", "/test1.png"))
            #expect(basic.status == 200 && basic.header("Content-Type") == "image/png" && [UInt8](basic.body) == png)
            #expect(basic.header("Content-Security-Policy") == Self.policy)
            // TestHandlerResponseHeadersPassthrough: the tag as the source sent it, no quotes added.
            var tagged = OriginResponse.ok(png, contentType: "image/png").tagged("etag")
            tagged.lastModified = october2015
            harness.origin.route("/tagged.png", tagged)
            let passed = try await harness.get(harness.signedPlain("raw:1", "/tagged.png"))
            #expect(passed.header("ETag") == "etag" && passed.header("Last-Modified") == october2015)
            #expect(passed.header("Content-Length") == String(png.count))
            // TestHandlerRequestHeadersPassthrough: the source is asked with If-None-Match, and
            // answers it (the test origin answers conditions; imgproxy's ignored it and sent 200).
            harness.origin.route("/asked.png", .ok(png, contentType: "image/png").tagged("\"test-etag-123\""))
            let asked = try await harness.get(harness.signedPlain("raw:1", "/asked.png"), headers: [("If-None-Match", "\"test-etag-123\"")])
            #expect(harness.origin.requests(to: "/asked.png").map { $0.header("If-None-Match") } == ["\"test-etag-123\""])
            #expect(asked.status == 304 && asked.header("ETag") == "\"test-etag-123\"" && asked.body.isEmpty)
            // TestHandlerContentDisposition.
            let named = try await harness.get(harness.signedPlain("raw:1/fn:custom_name/att:1", "/test1.png"))
            let disposition = named.header("Content-Disposition") ?? ""
            #expect(disposition.contains("custom_name.png") && disposition.contains("attachment"), "\(disposition)")
            // TestHandlerCacheControl: NoOriginHeaders (the TTL) and WithProcessingOptionsExpires.
            #expect(basic.header("Cache-Control") == "public, max-age=31536000")
            let inAnHour = Int(Date().timeIntervalSince1970) + 3600
            let expiring = try await harness.get(harness.signedPlain("raw:1/exp:\(inAnHour)", "/test1.png"))
            let maximumAge = expiring.header("Cache-Control")?.split(separator: "=").last.flatMap { Int($0) } ?? 0
            #expect((3540...3600).contains(maximumAge), "\(maximumAge)")
            // TestHandlerErrorResponse, with the policy every answer has.
            harness.origin.route("/missing.png", .status(404))
            let missing = try await harness.get(harness.signedPlain("raw:1", "/missing.png"))
            #expect(missing.status == 404 && missing.header("Content-Security-Policy") == Self.policy)
        }
        // TestHandlerCanonicalHeader.
        for sets in [true, false] {
            var configuration = ServerHarness.configuration()
            configuration.setsCanonicalHeader = sets
            try await ServerHarness.inProcess(configuration) { harness throws in
                harness.origin.route("/test1.png", .ok(png, contentType: "image/png"))
                let answer = try await harness.get(harness.signedPlain("raw:1", "/test1.png"))
                let link = answer.header("Link")
                #expect(
                    sets ? link == "<\(harness.origin.url("/test1.png").absoluteString)>; rel=\"canonical\"" : link == nil,
                    "\(link ?? "none")")
            }
        }
    }
}

/// imgproxy's `handlers/health/handler_test.go`: `/health` (and `IMGPROXY_HEALTH_CHECK_PATH`)
/// answers its words, as plain text, not to be cached.
@Suite("imgproxy's tables: health (handlers/health/handler_test.go)")
struct ImgproxyHealthTableTests {
    @Test("TestHealthHandler")
    func health() async throws {
        try await ServerHarness.inProcess { harness throws in
            let answer = try await harness.get("/health")
            #expect(answer.status == 200 && answer.text == "imgproxy is running")
            #expect(answer.header("Content-Type") == "text/plain" && answer.header("Cache-Control") == "no-cache")
        }
    }
}
