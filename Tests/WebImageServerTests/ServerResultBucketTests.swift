import Foundation
import Testing
import WebImage
import WebImageS3
import WebImageTesting

@testable import WebImageServer
import WebImageTestSupport

/// Results shared in a bucket (imgproxy Pro 4's internal cache with `IMGPROXY_CACHE_USE=s3`,
/// docs.imgproxy.net "Internal cache: Amazon S3"): a node with an empty disk answers from the
/// bucket without its origin, with the same bytes and validators; keys carry no signature; a
/// failing bucket degrades to the local tiers. SeaweedFS on 127.0.0.1 is the bucket.
@Suite("Server: results shared in a bucket")
struct ServerResultBucketTests {
    static func configuration(_ server: S3TestServer, bucket: String, endpoint: URL? = nil, reportsErrors: Bool = false)
        -> ImageServerConfiguration
    {
        var configuration = ServerHarness.configuration()
        configuration.resultBucket = ResultBucketSettings(
            client: S3Configuration(
                endpoint: endpoint ?? server.endpoint, usesPathStyle: true,
                credentials: S3Credentials(accessKeyID: server.accessKeyID, secretAccessKey: server.secretAccessKey), maximumAttempts: 1),
            bucket: bucket, keyPrefix: "results/", reportsErrors: reportsErrors)
        return configuration
    }

    static func signedPlain(_ origin: OriginServer, _ options: String, _ path: String) -> String {
        URLSigner(keys: [ServerHarness.exampleKey]).sign("/\(options)/plain/\(origin.url(path).absoluteString)")
    }

    @Test("a second node with an empty disk answers from the bucket: same bytes and ETag, no origin request, 304 without one too")
    func sharedAcrossNodes() async throws {
        let server = try await S3TestServer.shared()
        let bucket = S3Seeding.bucket()
        _ = try await S3Seeding.seed(server, [(S3Location(bucket: bucket, key: "placeholder"), Data())])
        let origin = try await OriginServer.start()
        origin.route("/photo.png", .ok([UInt8](try S3Seeding.png(width: 40, height: 30)), contentType: "image/png").tagged("\"p1\""))
        let path = Self.signedPlain(origin, "rs:fit:20:20", "/photo.png")
        var first: ServerHarness.Answer?
        // The node's shutdown waits for its bucket writes.
        try await ServerHarness.inProcess(Self.configuration(server, bucket: bucket), origin: origin) { harness throws in
            first = try await harness.get(path)
        }
        let made = try #require(first)
        #expect(made.status == 200 && origin.requestCount("/photo.png") == 1)
        // Another node, with another key (a rotation): the bucket's keys carry no signature.
        var rotated = Self.configuration(server, bucket: bucket)
        rotated.signingKeys = [ServerHarness.exampleKey, SigningKey(hexKey: "6f74686572", hexSalt: "73616c74")!]
        try await ServerHarness.inProcess(rotated, origin: origin) { harness throws in
            let answer = try await harness.get(path)
            #expect(answer.status == 200, "\(answer.text)")
            #expect(answer.body == made.body && answer.header("ETag") == made.header("ETag"))
            #expect(answer.header("Server-Timing")?.contains("cache;desc=\"bucket\"") == true, "\(answer.headers)")
        }
        try await ServerHarness.inProcess(Self.configuration(server, bucket: bucket), origin: origin) { harness throws in
            let conditional = try await harness.get(path, headers: [("If-None-Match", try #require(made.header("ETag")))])
            #expect(conditional.status == 304)
        }
        #expect(origin.requestCount("/photo.png") == 1, "the origin was asked once, by the first node")
    }

    @Test("a bucket that cannot be reached degrades to processing (or a 502 with reportsErrors), never a 5xx by default")
    func failingBucket() async throws {
        let server = try await S3TestServer.shared()
        let refusing = try RefusingPort()
        let origin = try await OriginServer.start()
        origin.route("/photo.png", .ok([UInt8](try S3Seeding.png(width: 8, height: 8)), contentType: "image/png"))
        let path = Self.signedPlain(origin, "w:4", "/photo.png")
        try await ServerHarness.inProcess(
            Self.configuration(server, bucket: "unreachable", endpoint: refusing.url("/")), origin: origin
        ) { harness throws in
            #expect(try await harness.get(path).status == 200)
        }
        let again = try await OriginServer.start()
        again.route("/photo.png", .ok([UInt8](try S3Seeding.png(width: 8, height: 8)), contentType: "image/png"))
        try await ServerHarness.inProcess(
            Self.configuration(server, bucket: "unreachable", endpoint: refusing.url("/"), reportsErrors: true), origin: again
        ) { harness throws in
            let answer = try await harness.get(Self.signedPlain(again, "w:4", "/photo.png"))
            #expect(answer.status == 502 && answer.text.contains("result bucket"), "\(answer.text)")
        }
    }

    @Test("a cold node's concurrent first requests for one result make one bucket lookup, which the last leaving cancels")
    func lookupsShared() async throws {
        let server = try await S3TestServer.shared()
        // Stands in for the bucket: it records every request and can leave one unanswered.
        let endpoint = try await OriginServer.start()
        let origin = try await OriginServer.start()
        origin.route("/photo.png", .ok([UInt8](try S3Seeding.png(width: 8, height: 8)), contentType: "image/png"))
        let path = Self.signedPlain(origin, "w:4", "/photo.png")
        let configuration = Self.configuration(server, bucket: "results", endpoint: endpoint.url("/"))
        // A first node finds where the result's object is: the endpoint's 404 is a miss.
        try await ServerHarness.inProcess(configuration, origin: origin) { harness throws in
            #expect(try await harness.get(path).status == 200)
        }
        let object = try #require(endpoint.requests.first { $0.method == "GET" }).path
        endpoint.route(object, OriginResponse(delivery: .neverRespond))
        try await ServerHarness.inProcess(configuration, origin: origin) { harness throws in
            let requests = (0..<4).map { _ in Task { try await harness.get(path) } }
            // All four wait for the one lookup (without the sharing none would: the wait fails).
            try await waitUntil("four requests waiting for the lookup") { harness.server.proxy.bucketLookupWaiterCount == 4 }
            // The first node's GET and its write of the result, then this node's GET.
            _ = try await endpoint.waitForRequests(3, to: object)
            #expect(endpoint.requests(to: object).map(\.method) == ["GET", "PUT", "GET"], "one GET for the four requests")
            for request in requests { request.cancel() }
            for request in requests { _ = try? await request.value }
            try await endpoint.waitForAbandonedResponse(to: object)
        }
        #expect(origin.requestCount("/photo.png") == 1, "the second node processed nothing")
        try await endpoint.shutdown()
    }
}
