import Foundation
import Testing
import WebImageCore
import WebImageS3
import WebImageTesting

/// The client against a server that misbehaves: the project's scripted origin on 127.0.0.1
/// standing in for S3 (path-style, so `/BUCKET/KEY` is the path it sees). Clear errors, in
/// bounded time, and retries only for what is transient.
@Suite("S3 client against a hostile server")
struct S3HostileServerTests {
    static func withClient(
        maximumAttempts: Int = 3, timeout: Duration = .seconds(10), maximumObjectSize: Int = 1 << 20,
        _ body: (S3Client, OriginServer) async throws -> Void
    ) async throws {
        let origin = try await OriginServer.start()
        let client = S3Client(
            configuration: S3Configuration(
                endpoint: URL(string: "http://127.0.0.1:\(origin.port)")!, usesPathStyle: true,
                credentials: S3Credentials(accessKeyID: "AKID", secretAccessKey: "secret"), maximumAttempts: maximumAttempts,
                retryBaseDelay: .milliseconds(1), timeout: timeout, maximumObjectSize: maximumObjectSize))
        do {
            try await body(client, origin)
        } catch {
            try? await client.shutdown()
            try? await origin.shutdown()
            throw error
        }
        try await client.shutdown()
        try await origin.shutdown()
    }

    static let slowDown = OriginResponse(
        status: 503, headers: [("Content-Type", "application/xml")],
        body: Array("<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message><RequestId>R1</RequestId></Error>".utf8)
    )

    @Test("SlowDown is retried with back-off and then succeeds; past the attempts it is a transient badStatus(503) naming SlowDown")
    func slowDownRetried() async throws {
        try await Self.withClient { client, origin in
            origin.route("/b/busy.jpg", sequence: [Self.slowDown, Self.slowDown, .ok(Array("image".utf8), contentType: "image/jpeg")])
            let object = try await client.getObject(S3Location(bucket: "b", key: "busy.jpg"))
            #expect(object.data == Data("image".utf8))
            #expect(origin.requests(to: "/b/busy.jpg").count == 3)
            // Each try is signed anew.
            #expect(origin.requests(to: "/b/busy.jpg").allSatisfy { $0.header("Authorization")?.hasPrefix("AWS4-HMAC-SHA256 ") == true })
            origin.route("/b/always.jpg", Self.slowDown)
            let error = await #expect(throws: WebImageError.self) { try await client.getObject(S3Location(bucket: "b", key: "always.jpg")) }
            #expect(error?.code == .badStatus(503) && error?.isTransient == true)
            #expect((error?.underlyingError as? S3ServiceError)?.code == .slowDown)
            #expect((error?.underlyingError as? S3ServiceError)?.requestID == "R1")
            #expect(origin.requests(to: "/b/always.jpg").count == 3)
        }
    }

    @Test("issue 57: an error document of megabytes is judged by its status; a long or control-laden code is cut and cleaned")
    func hostileErrorText() async throws {
        try await Self.withClient(maximumAttempts: 1) { client, origin in
            // Before, a 40 MB code came back whole, into the proxy's 502 body and its log.
            let huge = "<Error><Code>" + String(repeating: "A", count: 8 << 20) + "</Code></Error>"
            origin.route("/b/huge.jpg", OriginResponse(status: 500, body: Array(huge.utf8)))
            let error = await #expect(throws: WebImageError.self) { try await client.getObject(S3Location(bucket: "b", key: "huge.jpg")) }
            let service = try #require(error?.underlyingError as? S3ServiceError)
            #expect(service.code.rawValue == "HTTP500" && "\(error!)".count < 500, "\(service.code)")
            let long =
                "<Error><Code>" + String(repeating: "B", count: 4000) + "\u{1B}[31m</Code><Message>line\nbreak\u{7}</Message></Error>"
            origin.route("/b/long.jpg", OriginResponse(status: 500, body: Array(long.utf8)))
            let cut = await #expect(throws: WebImageError.self) { try await client.getObject(S3Location(bucket: "b", key: "long.jpg")) }
            let cutService = try #require(cut?.underlyingError as? S3ServiceError)
            #expect(cutService.code.rawValue.count == 257 && cutService.code.rawValue.hasSuffix("…"), "\(cutService.code.rawValue.count)")
            #expect(cutService.message == "line?break?", "\(String(describing: cutService.message))")
        }
    }

    @Test("a 4xx is not retried")
    func permanentNotRetried() async throws {
        try await Self.withClient { client, origin in
            origin.route("/b/denied.jpg", OriginResponse(status: 403, body: Array("<Error><Code>AccessDenied</Code></Error>".utf8)))
            let error = await #expect(throws: WebImageError.self) { try await client.getObject(S3Location(bucket: "b", key: "denied.jpg")) }
            #expect(error?.code == .badStatus(403) && error?.isTransient == false)
            #expect(origin.requests(to: "/b/denied.jpg").count == 1)
        }
    }

    @Test("a body cut short is connectionLost, retried, and never returned as the object")
    func truncated() async throws {
        try await Self.withClient { client, origin in
            let bytes = Array(repeating: UInt8(7), count: 10_000)
            origin.route("/b/cut.jpg", OriginResponse(body: bytes, delivery: .cutShort(after: 100)))
            let error = await #expect(throws: WebImageError.self) { try await client.getObject(S3Location(bucket: "b", key: "cut.jpg")) }
            #expect(error?.code == .connectionLost)
            #expect(origin.requests(to: "/b/cut.jpg").count == 3)
            origin.route(
                "/b/once.jpg", sequence: [OriginResponse(body: bytes, delivery: .cutShort(after: 100)), OriginResponse(body: bytes)])
            let object = try await client.getObject(S3Location(bucket: "b", key: "once.jpg"))
            #expect(object.data == Data(bytes))
        }
    }

    @Test("a stalled body times out within the timeout")
    func stalled() async throws {
        try await Self.withClient(maximumAttempts: 1, timeout: .milliseconds(500)) { client, origin in
            origin.route("/b/stall.jpg", OriginResponse(body: Array(repeating: 1, count: 1000), delivery: .stall(after: 10)))
            let error = await #expect(throws: WebImageError.self) { try await client.getObject(S3Location(bucket: "b", key: "stall.jpg")) }
            #expect(error?.code == .timedOut)
        }
    }

    @Test("an object over the size limit is tooLarge: from Content-Length before reading, or while reading a chunked body")
    func tooLarge() async throws {
        try await Self.withClient(maximumObjectSize: 1 << 20) { client, origin in
            let big = Array(repeating: UInt8(1), count: (1 << 20) + 1)
            origin.route("/b/declared.jpg", OriginResponse(body: big))
            origin.route("/b/chunked.jpg", OriginResponse(body: big, chunked: true))
            for key in ["declared.jpg", "chunked.jpg"] {
                let error = await #expect(throws: WebImageError.self) { try await client.getObject(S3Location(bucket: "b", key: key)) }
                #expect(error?.code == .tooLarge, "\(key)")
            }
        }
    }

    @Test("malformed XML is badServerResponse; a completed upload answered 200 with an <Error> body is that error")
    func malformedAnswers() async throws {
        try await Self.withClient { client, origin in
            origin.route("/b", OriginResponse(body: Array("<ListBucketResult><Contents><Key>a</Key>".utf8)))
            let listing = await #expect(throws: WebImageError.self) { try await client.listObjects(bucket: "b") }
            #expect(listing?.code == .badServerResponse)
            origin.route(
                "/b/big.tar",
                OriginResponse(body: Array("<Error><Code>InternalError</Code><Message>combining failed</Message></Error>".utf8)))
            let completed = await #expect(throws: WebImageError.self) {
                try await client.completeMultipartUpload(
                    S3Location(bucket: "b", key: "big.tar"), uploadID: "u", parts: [S3UploadedPart(partNumber: 1, etag: "\"e\"")])
            }
            #expect((completed?.underlyingError as? S3ServiceError)?.code == S3ServiceError.Code("InternalError"))
            let request = try #require(origin.requests(to: "/b/big.tar").first)
            #expect(String(decoding: request.body, as: UTF8.self).contains("<PartNumber>1</PartNumber><ETag>&quot;e&quot;</ETag>"))
        }
    }

    @Test("a refused connection is cannotConnect, tried the configured number of times")
    func refused() async throws {
        let port = try RefusingPort()
        let client = S3Client(
            configuration: S3Configuration(
                endpoint: port.url("/"), usesPathStyle: true, maximumAttempts: 2, retryBaseDelay: .milliseconds(1)))
        let error = await #expect(throws: WebImageError.self) { try await client.headObject(S3Location(bucket: "b", key: "k")) }
        #expect(error?.code == .cannotConnect)
        try await client.shutdown()
    }
}
