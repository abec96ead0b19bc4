import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageTesting
@testable import WebImageServer

/// imgproxy's route settings on the server, as its `imgproxy.go` (`BuildRouter`) and
/// `server/middlewares.go` (`WithSecret`, `WithCORS`) define them: the path prefix added to every
/// route, the bearer secret on processing requests only, the CORS headers on processing answers
/// and on `OPTIONS` (answered 200), and a second health path.
@Suite("Server routes", .serialized)
struct ServerRoutesTests {
    let jpeg: [UInt8]

    init() throws {
        jpeg = [UInt8](try Fixture.data("gradient.jpg"))
    }

    @Test("IMGPROXY_PATH_PREFIX: every route under the prefix, nothing outside it")
    func pathPrefix() async throws {
        var configuration = ServerHarness.configuration()
        configuration.pathPrefix = "/images"
        configuration.healthCheckPath = "/alive"
        try await ServerHarness.with(configuration) { harness throws in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let signed = harness.signedPlain("w:20", "/a.jpg", extension: "png")
            let prefixed = try await harness.get("/images" + signed)
            #expect(prefixed.status == 200)
            #expect(try await harness.get(signed).status == 404, "outside the prefix")
            #expect(try await harness.get("/imagesx" + signed).status == 404, "the prefix ends at a /")
            #expect(try await harness.get("/images/health").text == "ok\n")
            #expect(try await harness.get("/images/alive").text == "ok\n")
            #expect(try await harness.get("/health").status == 404)
        }
    }

    @Test("IMGPROXY_SECRET: a processing request needs Authorization: Bearer SECRET; health does not")
    func secret() async throws {
        var configuration = ServerHarness.configuration()
        configuration.secret = "s3cr3t"
        try await ServerHarness.with(configuration) { harness throws in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let signed = harness.signedPlain("w:20", "/a.jpg", extension: "png")
            let authorized = try await harness.get(signed, headers: [("Authorization", "Bearer s3cr3t")])
            #expect(authorized.status == 200)
            for wrong in [[], [("Authorization", "Bearer s3cr3")], [("Authorization", "Bearer s3cr3tt")], [("Authorization", "s3cr3t")]] {
                let refused = try await harness.get(signed, headers: wrong)
                #expect(refused.status == 403, "\(wrong)")
                #expect(refused.text.contains("secret"), "\(refused.text)")
            }
            #expect(harness.origin.requestCount("/a.jpg") == 1, "a refused request fetched nothing")
            #expect(try await harness.get("/health").status == 200)
        }
        #expect(ImageServer.constantTimeEqual("Bearer a", "Bearer a"))
        #expect(!ImageServer.constantTimeEqual("Bearer a", "Bearer b"))
        #expect(!ImageServer.constantTimeEqual("", "Bearer a"))
    }

    @Test("IMGPROXY_ALLOW_ORIGIN: CORS headers on processing answers, errors included, and a 200 to OPTIONS")
    func cors() async throws {
        var configuration = ServerHarness.configuration()
        configuration.allowOrigin = "https://app.example"
        try await ServerHarness.with(configuration) { harness in
            harness.origin.route("/a.jpg", .ok(jpeg, contentType: "image/jpeg"))
            let signed = harness.signedPlain("w:20", "/a.jpg", extension: "png")
            for answer in [try await harness.get(signed), try await harness.get("/bad/w:20/plain/x")] {
                #expect(answer.header("Access-Control-Allow-Origin") == "https://app.example")
                #expect(answer.header("Access-Control-Allow-Methods") == "GET, OPTIONS")
            }
            let preflight = try await harness.get(signed, method: .OPTIONS)
            #expect(preflight.status == 200 && preflight.body.isEmpty)
            #expect(preflight.header("Access-Control-Allow-Origin") == "https://app.example")
            #expect(harness.origin.requestCount("/a.jpg") == 1, "OPTIONS processed nothing")
        }
        try await ServerHarness.with { harness in
            let answer = try await harness.get("/health", method: .OPTIONS)
            let deleted = try await harness.get("/health", method: .DELETE)
            #expect(answer.status == 200 && answer.header("Access-Control-Allow-Origin") == nil, "no origin configured, no CORS")
            #expect(deleted.status == 405)
        }
    }
}
