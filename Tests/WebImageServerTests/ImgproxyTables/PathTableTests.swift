import Foundation
import Testing
import WebImage
import WebImageTesting
@testable import WebImageServer
import WebImageTestSupport

/// imgproxy's request path tests as ours: `handlers/path_test.go` at v4 (eef3b312),
/// `TestParsePath` (``ProxyPath``'s split of the signature and the signed path) and
/// `TestRedenormalizePathHTTPProtocol` (``ProxyPath/redenormalized(_:)``). One row does not hold
/// here, on purpose: `PathWithQueryParams` (imgproxy drops a request's query) is a 400, since
/// the signature does not cover a query and each one would be another key for the same image in
/// every cache in front; a source's own query is escaped inside the path (`HardeningTests`).
@Suite("imgproxy's tables: request paths (handlers/path_test.go)")
struct ImgproxyPathTableTests {
    @Test(
        "TestParsePath: the signature and the path it signs",
        arguments: [
            (
                "BasicPath", "/dummy_signature/rs:fill:300:200/plain/http://example.com/image.jpg",
                "/rs:fill:300:200/plain/http://example.com/image.jpg"
            ),
            (
                "PathWithPlainUrlRedenormalization", "/dummy_signature/rs:fill:300:200/plain/https:/example.com/path/to/image.jpg",
                "/rs:fill:300:200/plain/https://example.com/path/to/image.jpg"
            ),
            (
                "PathWithOptionsSeparatorUnescapingPLain",
                "/dummy_signature/rs%3Afill%3A300%3A200/plain/https://example.com/path/to/image.jpg",
                "/rs:fill:300:200/plain/https://example.com/path/to/image.jpg"
            ),
        ])
    func parsePath(_ name: String, _ requestPath: String, _ signedPath: String) throws {
        let path = try ProxyPath(parsing: Substring(requestPath))
        #expect(path.signature == "dummy_signature" && path.signedPath == Substring(signedPath), "\(name): \(path.signedPath)")
        #expect(path.options == ["rs:fill:300:200"], "\(name)")
        #expect(path.source.absoluteString.hasSuffix("example.com/" + (name == "BasicPath" ? "image.jpg" : "path/to/image.jpg")))
    }

    @Test(
        "TestParsePath's base64 row (PathWithOptionsSeparatorUnescapingBas64) and its refusals (NoSignatureSeparator, EmptyPath, OnlySignature)"
    )
    func parsePathEdges() {
        #expect(ProxyPath.redenormalized("/rs%3Afill%3A300%3A200/abc/abc") == "/rs:fill:300:200/abc/abc")
        for path in ["/invalid_path_without_slash", "/", "/signature_only"] {
            #expect(throws: ProxyError.self, "\(path)") { try ProxyPath(parsing: Substring(path)) }
        }
    }

    @Test(
        "TestRedenormalizePathHTTPProtocol: each row",
        arguments: [
            ("HTTP", "plain/http:/example.com/image.jpg", "plain/http://example.com/image.jpg"),
            ("HTTPS", "plain/https:/example.com/image.jpg", "plain/https://example.com/image.jpg"),
            ("Local", "plain/local:/image.jpg", "plain/local:///image.jpg"),
            ("WithOptions", "/rs:fill:300:200/plain/http:/example.com/image.jpg", "rs:fill:300:200/plain/http://example.com/image.jpg"),
            ("NormalizedPath", "/plain/http://example.com/image.jpg", "plain/http://example.com/image.jpg"),
            ("ProtocolMissing", "/rs:fill:300:200/plain/example.com/image.jpg", "rs:fill:300:200/plain/example.com/image.jpg"),
            ("EmptyString", "", ""), ("SingleSlash", "/", ""),
            ("NoPlainPrefix", "/http:/example.com/image.jpg", "http:/example.com/image.jpg"),
            ("NoProtocol", "/plain/example.com/image.jpg", "plain/example.com/image.jpg"),
            ("EndsWithProtocol", "/plain/http:", "plain/http:"), ("OnlyProtocol", "/plain/http:/test", "plain/http://test"),
        ])
    func redenormalize(_ name: String, _ input: String, _ expected: String) {
        // imgproxy's function takes the path with or without its leading slash and returns it
        // without; ours takes it with one and returns nil when nothing changes.
        let withSlash = input.hasPrefix("/") ? input : "/" + input
        let result = ProxyPath.redenormalized(Substring(withSlash)) ?? withSlash
        #expect(String(result.dropFirst()) == expected, "\(name)")
    }

    @Test("over HTTP: a path a proxy collapsed and escaped is served and its signature, over the restored path, holds")
    func overHTTP() async throws {
        let jpeg = [UInt8](try Fixture.data("gradient.jpg"))
        try await ServerHarness.inProcess { harness throws in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let signed = harness.signedPlain("rs:fit:10:10", "/a.jpg")
            let collapsed = signed.replacingOccurrences(of: "http://", with: "http:/").replacingOccurrences(of: "rs:fit", with: "rs%3Afit")
            #expect(collapsed != signed)
            let answer = try await harness.get(collapsed)
            #expect(answer.status == 200, "\(answer.text)")
        }
    }
}
