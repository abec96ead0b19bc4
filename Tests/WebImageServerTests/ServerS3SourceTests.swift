import Foundation
import Testing
import WebImage
import WebImageS3
@testable import WebImageServer
import WebImageTesting
import WebImageTestSupport

/// `s3://` sources in the proxy, as imgproxy reads them (`fetcher/transport/url.go`
/// `GetBucketAndKey`: the key as written after the plain URL's one decoding, cut at
/// `IMGPROXY_SOURCE_URL_QUERY_SEPARATOR`, the rest a version id; `storage/common/lists.go`
/// `IsBucketAllowed`), against SeaweedFS on 127.0.0.1.
@Suite("Server: s3:// sources")
struct ServerS3SourceTests {
    /// A configuration reading s3:// sources from the test server, with loopback http(s)
    /// sources refused as a deployment refuses them.
    static func configuration(_ server: S3TestServer, secret: String? = nil) -> ImageServerConfiguration {
        var configuration = ServerHarness.configuration()
        configuration.allowsLoopbackSources = false
        configuration.s3Sources = S3Sources(
            client: S3Configuration(
                endpoint: server.endpoint, usesPathStyle: true,
                credentials: S3Credentials(accessKeyID: server.accessKeyID, secretAccessKey: secret ?? server.secretAccessKey)))
        return configuration
    }

    @Test("an s3:// source is fetched from the operator's loopback endpoint and processed; its key is taken as written; missing is 404")
    func processes() async throws {
        let server = try await S3TestServer.shared()
        let bucket = S3Seeding.bucket()
        _ = try await S3Seeding.seed(
            server, [(S3Location(bucket: bucket, key: "photos/a b+c.png"), try S3Seeding.png(width: 40, height: 20))])
        try await ServerHarness.inProcess(Self.configuration(server)) { harness throws in
            let answer = try await harness.get(harness.signer.sign("/rs:fit:10:10/plain/s3://\(bucket)/photos/a%20b+c.png@png"))
            #expect(answer.status == 200, "\(answer.text)")
            let header = try ImageHeader(data: [UInt8](answer.body))
            #expect(header.width == 10 && header.height == 5)
            // Leading slashes of the key are dropped, as imgproxy's TrimLeft does.
            #expect(try await harness.get(harness.signer.sign("/w:4/plain/s3://\(bucket)//photos/a%20b+c.png@png")).status == 200)
            let missing = try await harness.get(harness.signer.sign("/w:4/plain/s3://\(bucket)/photos/none.png@png"))
            #expect(missing.status == 404 && missing.text.contains("does not exist"), "\(missing.text)")
            let noBucket = try await harness.get(harness.signer.sign("/w:4/plain/s3://\(S3Seeding.bucket())/a.png@png"))
            #expect(noBucket.status == 404 && noBucket.text.contains("bucket"), "\(noBucket.text)")
            #expect(try await harness.get(harness.signer.sign("/w:4/plain/s3://\(bucket)/@png")).status == 404, "no key")
            // base64 sources too.
            let encoded = URLSigner.base64URL(Array("s3://\(bucket)/photos/a b+c.png".utf8))
            #expect(try await harness.get(harness.signer.sign("/w:4/\(encoded).png")).status == 200)
        }
    }

    @Test("the endpoint is the operator's: an http source at the same loopback address stays refused by the address guard")
    func endpointIsNotASource() async throws {
        let server = try await S3TestServer.shared()
        let bucket = S3Seeding.bucket()
        _ = try await S3Seeding.seed(server, [(S3Location(bucket: bucket, key: "x.png"), try S3Seeding.png(width: 4, height: 4))])
        try await ServerHarness.inProcess(Self.configuration(server)) { harness throws in
            #expect(try await harness.get(harness.signer.sign("/w:2/plain/s3://\(bucket)/x.png@png")).status == 200)
            let direct = try await harness.get(harness.signer.sign("/w:2/plain/\(server.endpoint.absoluteString)/\(bucket)/x.png@png"))
            #expect(direct.status == 404 && direct.text.contains("address policy"), "\(direct.text)")
        }
    }

    @Test("?VERSION after the key reads that version; IMGPROXY_SOURCE_URL_QUERY_SEPARATOR changes the separator, empty for none")
    func versions() async throws {
        let server = try await S3TestServer.shared()
        let bucket = S3Seeding.bucket()
        let location = S3Location(bucket: bucket, key: "v.png")
        _ = try await S3Seeding.seed(server, [(S3Location(bucket: bucket, key: "first"), Data())])
        let client = S3Client(
            configuration: S3Configuration(
                endpoint: server.endpoint, usesPathStyle: true,
                credentials: S3Credentials(accessKeyID: server.accessKeyID, secretAccessKey: server.secretAccessKey)))
        _ = try await client.send(
            "PUT", S3Location(bucket: bucket, key: ""), query: [("versioning", "")],
            body: Data("<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>".utf8))
        try await client.shutdown()
        let puts = try await S3Seeding.seed(
            server, [(location, try S3Seeding.png(width: 12, height: 4)), (location, try S3Seeding.png(width: 30, height: 4))])
        let old = try #require(puts[0].versionID)
        try await ServerHarness.inProcess(Self.configuration(server)) { harness throws in
            func width(_ source: String) async throws -> Int? {
                let answer = try await harness.get(harness.signer.sign("/plain/\(source)@png"))
                return answer.status == 200 ? try ImageHeader(data: [UInt8](answer.body)).width : nil
            }
            #expect(try await width("s3://\(bucket)/v.png") == 30)
            #expect(try await width("s3://\(bucket)/v.png%3F\(old)") == 12, "the version after ?, escaped in the request path")
        }
        var separated = Self.configuration(server)
        separated.sourceURLQuerySeparator = "|"
        try await ServerHarness.inProcess(separated) { harness throws in
            let answer = try await harness.get(harness.signer.sign("/plain/s3://\(bucket)/v.png%7C\(old)@png"))
            #expect(answer.status == 200 && (try? ImageHeader(data: [UInt8](answer.body)).width) == 12)
        }
        var none = Self.configuration(server)
        none.sourceURLQuerySeparator = ""
        try await ServerHarness.inProcess(none) { harness throws in
            let answer = try await harness.get(harness.signer.sign("/plain/s3://\(bucket)/v.png%3F\(old)@png"))
            #expect(answer.status == 404, "the whole text is the key")
        }
    }

    @Test("allowed and denied buckets, the allowed sources' s3:// prefixes, refused credentials, and S3 off")
    func refusals() async throws {
        let server = try await S3TestServer.shared()
        let (open, closed) = (S3Seeding.bucket(), S3Seeding.bucket())
        _ = try await S3Seeding.seed(
            server,
            [
                (S3Location(bucket: open, key: "public/a.png"), try S3Seeding.png(width: 4, height: 4)),
                (S3Location(bucket: open, key: "private/a.png"), try S3Seeding.png(width: 4, height: 4)),
                (S3Location(bucket: closed, key: "public/a.png"), try S3Seeding.png(width: 4, height: 4)),
            ])
        var configuration = Self.configuration(server)
        configuration.s3Sources?.allowedBuckets = [open]
        try await ServerHarness.inProcess(configuration) { harness throws in
            #expect(try await harness.get(harness.signer.sign("/w:2/plain/s3://\(open)/public/a.png@png")).status == 200)
            let denied = try await harness.get(harness.signer.sign("/w:2/plain/s3://\(closed)/public/a.png@png"))
            #expect(denied.status == 403 && denied.text.contains("bucket \(closed) is denied"), "\(denied.text)")
        }
        configuration.s3Sources?.allowedBuckets = []
        configuration.s3Sources?.deniedBuckets = [closed]
        configuration.allowedSources = ["s3://\(open)/public/"]
        try await ServerHarness.inProcess(configuration) { harness throws in
            #expect(try await harness.get(harness.signer.sign("/w:2/plain/s3://\(open)/public/a.png@png")).status == 200)
            #expect(
                try await harness.get(harness.signer.sign("/w:2/plain/s3://\(closed)/public/a.png@png")).status == 404,
                "the allow-list is judged first")
            let outside = try await harness.get(harness.signer.sign("/w:2/plain/s3://\(open)/private/a.png@png"))
            #expect(outside.status == 404 && outside.text.contains("not on the allowed list"), "\(outside.text)")
            // Escaped so that no client or server on the way resolves the dots before the proxy judges them.
            let dotted = try await harness.get(harness.signer.sign("/w:2/plain/s3://\(open)/public/%2E%2E/private/a.png@png"))
            #expect(
                dotted.status == 400 && dotted.text.contains("segments"),
                "dot segments are refused before any list or bucket rule (issue 57): \(dotted.text)")
        }
        try await ServerHarness.inProcess(Self.configuration(server, secret: "wrong-secret-value")) { harness throws in
            let refused = try await harness.get(harness.signer.sign("/w:2/plain/s3://\(open)/public/a.png@png"))
            #expect(refused.status == 403 && refused.text.contains("SignatureDoesNotMatch"), "\(refused.text)")
            #expect(!refused.text.contains("wrong-secret-value"))
        }
        try await ServerHarness.inProcess(ServerHarness.configuration()) { harness throws in
            let off = try await harness.get(harness.signer.sign("/w:2/plain/s3://\(open)/public/a.png@png"))
            #expect(off.status == 400 && off.text.contains("IMGPROXY_USE_S3"), "\(off.text)")
        }
    }
}
