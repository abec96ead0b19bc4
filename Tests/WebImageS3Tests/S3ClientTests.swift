import AsyncHTTPClient
import Foundation
import Testing
import WebImageCore
import WebImageS3
import WebImageTesting

/// Every operation of the client against a real S3-compatible server (SeaweedFS on 127.0.0.1,
/// which checks signatures: ``S3TestServer``). Each test works in a bucket of its own.
@Suite("S3 client against SeaweedFS")
struct S3ClientTests {
    /// The clients a test makes, shut down when it ends however it ends.
    final class Harness: Sendable {
        let server: S3TestServer
        private let made = Locked<[S3Client]>([])

        init(_ server: S3TestServer) {
            self.server = server
        }

        func client(keyID: String? = nil, secret: String? = nil, signed: Bool = true) -> S3Client {
            let credentials = S3Credentials(accessKeyID: keyID ?? server.accessKeyID, secretAccessKey: secret ?? server.secretAccessKey)
            let client = S3Client(
                configuration: S3Configuration(endpoint: server.endpoint, usesPathStyle: true, credentials: signed ? credentials : nil))
            made.withLock { $0.append(client) }
            return client
        }

        static func run(_ body: (Harness) async throws -> Void) async throws {
            let harness = Harness(try await S3TestServer.shared())
            do {
                try await body(harness)
            } catch {
                for client in harness.made.withLock({ $0 }) { try? await client.shutdown() }
                throw error
            }
            for client in harness.made.withLock({ $0 }) { try await client.shutdown() }
        }
    }

    static func bucket() -> String {
        "t-" + UUID().uuidString.lowercased().prefix(13).replacingOccurrences(of: "-", with: "")
    }

    static func serviceError(_ error: WebImageError) -> S3ServiceError? {
        error.underlyingError as? S3ServiceError
    }

    @Test("PUT, GET, HEAD and DELETE round trip keys with spaces, a plus, UTF-8 and repeated slashes, with their headers")
    func roundTrip() async throws {
        try await Harness.run { harness in
            let client = harness.client()
            let bucket = Self.bucket()
            let bytes = Data((0..<1000).map { UInt8($0 % 251) })
            for key in ["plain.png", "a b+c/été.png", "dir//twice/x.png", "odd ~!$&'()*,;=@.png"] {
                let location = S3Location(bucket: bucket, key: key)
                let put = try await client.putObject(
                    location, data: bytes, contentType: "image/png", cacheControl: "max-age=60", metadata: ["Origin": "test"])
                #expect(put.etag?.isEmpty == false)
                let object = try await client.getObject(location)
                #expect(object.data == bytes, "\(key)")
                #expect(object.info.contentType == "image/png")
                #expect(object.info.etag == put.etag)
                #expect(object.info.size == 1000)
                #expect(object.info.cacheControl == "max-age=60")
                #expect(object.info.metadata["origin"] == "test")
                #expect(object.info.lastModified != nil)
                let head = try await client.headObject(location)
                #expect(head.etag == put.etag && head.size == 1000)
                try await client.deleteObject(location)
                let gone = await #expect(throws: WebImageError.self) { try await client.getObject(location) }
                #expect(gone?.code == .badStatus(404))
                #expect(gone.flatMap(Self.serviceError)?.code == .noSuchKey)
            }
            // Deleting what is not there is no error, as in S3.
            try await client.deleteObject(S3Location(bucket: bucket, key: "never-was"))
        }
    }

    @Test("GET with If-None-Match or If-Modified-Since answers notModified; Range answers the bytes asked for and the whole size")
    func conditionalAndRange() async throws {
        try await Harness.run { harness in
            let client = harness.client()
            let location = S3Location(bucket: Self.bucket(), key: "image.jpg")
            let bytes = Data((0..<443).map { UInt8($0 & 0xFF) })
            let put = try await client.putObject(location, data: bytes, contentType: "image/jpeg")
            let etag = try #require(put.etag)
            let matched = await #expect(throws: WebImageError.self) {
                try await client.getObject(location, options: S3GetOptions(ifNoneMatch: etag))
            }
            #expect(matched?.code == .notModified)
            let later = Date().addingTimeInterval(3600)
            let unmodified = await #expect(throws: WebImageError.self) {
                try await client.getObject(location, options: S3GetOptions(ifModifiedSince: later))
            }
            #expect(unmodified?.code == .notModified)
            // A different ETag gets the bytes.
            #expect(try await client.getObject(location, options: S3GetOptions(ifNoneMatch: "\"other\"")).data == bytes)
            let range = try await client.getObject(location, options: S3GetOptions(range: "bytes=0-9"))
            #expect(range.data == bytes.prefix(10))
            #expect(range.contentRange == "bytes 0-9/443")
            #expect(range.info.size == 443)
        }
    }

    @Test("a missing bucket is 404 NoSuchBucket; a HEAD of a missing key is 404 without a body")
    func missing() async throws {
        try await Harness.run { harness in
            let client = harness.client()
            let noBucket = await #expect(throws: WebImageError.self) {
                try await client.getObject(S3Location(bucket: Self.bucket(), key: "a"))
            }
            #expect(noBucket?.code == .badStatus(404))
            #expect(noBucket.flatMap(Self.serviceError)?.code == .noSuchBucket)
            let bucket = Self.bucket()
            try await client.putObject(S3Location(bucket: bucket, key: "present"), data: Data("x".utf8))
            let head = await #expect(throws: WebImageError.self) { try await client.headObject(S3Location(bucket: bucket, key: "absent")) }
            #expect(head?.code == .badStatus(404))
        }
    }

    @Test("refused credentials: a wrong secret, an unknown key, a read-only key writing, no key at all; no message holds the secret")
    func refusedCredentials() async throws {
        try await Harness.run { harness in
            let server = harness.server
            let owner = harness.client()
            let location = S3Location(bucket: Self.bucket(), key: "secret.png")
            try await owner.putObject(location, data: Data("bytes".utf8))
            let wrongSecret = harness.client(secret: "not-the-secret-at-all")
            let mismatch = await #expect(throws: WebImageError.self) { try await wrongSecret.getObject(location) }
            #expect(mismatch?.code == .badStatus(403))
            #expect(mismatch.flatMap(Self.serviceError)?.code == .signatureDoesNotMatch)
            #expect(mismatch.map { !"\($0)".contains("not-the-secret-at-all") } == true)
            let unknown = harness.client(keyID: "AKIDNOBODY")
            let unknownError = await #expect(throws: WebImageError.self) { try await unknown.getObject(location) }
            #expect(unknownError?.code == .badStatus(403))
            #expect(unknownError.flatMap(Self.serviceError)?.code == .invalidAccessKeyID)
            let reader = harness.client(keyID: server.readOnlyAccessKeyID, secret: server.readOnlySecretAccessKey)
            #expect(try await reader.getObject(location).data == Data("bytes".utf8))
            let denied = await #expect(throws: WebImageError.self) { try await reader.putObject(location, data: Data("other".utf8)) }
            #expect(denied?.code == .badStatus(403))
            #expect(denied.flatMap(Self.serviceError)?.code == .accessDenied)
            let anonymous = harness.client(signed: false)
            let unsigned = await #expect(throws: WebImageError.self) { try await anonymous.getObject(location) }
            #expect(unsigned?.code == .badStatus(403))
        }
    }

    @Test("a multipart upload appears whole only when completed; an aborted one never appears and takes no more parts")
    func multipart() async throws {
        try await Harness.run { harness in
            let client = harness.client()
            let bucket = Self.bucket()
            let location = S3Location(bucket: bucket, key: "shards/00000.tar")
            try await client.putObject(S3Location(bucket: bucket, key: "other"), data: Data())
            let first = Data(repeating: 0xA5, count: 5 << 20)
            let second = Data("the last part may be small".utf8)
            let upload = try await client.createMultipartUpload(location, contentType: "application/x-tar")
            let parts = [
                try await client.uploadPart(location, uploadID: upload, partNumber: 1, data: first),
                try await client.uploadPart(location, uploadID: upload, partNumber: 2, data: second),
            ]
            let before = await #expect(throws: WebImageError.self) { try await client.headObject(location) }
            #expect(before?.code == .badStatus(404), "no object before the upload completes")
            // Given out of order: completing sorts them.
            try await client.completeMultipartUpload(location, uploadID: upload, parts: parts.reversed())
            let object = try await client.getObject(location)
            #expect(object.data == first + second)
            #expect(object.info.contentType == "application/x-tar")

            let abandoned = S3Location(bucket: bucket, key: "shards/00001.tar")
            let aborted = try await client.createMultipartUpload(abandoned)
            _ = try await client.uploadPart(abandoned, uploadID: aborted, partNumber: 1, data: second)
            try await client.abortMultipartUpload(abandoned, uploadID: aborted)
            let afterAbort = await #expect(throws: WebImageError.self) {
                try await client.uploadPart(abandoned, uploadID: aborted, partNumber: 2, data: second)
            }
            #expect(afterAbort?.code == .badStatus(404))
            #expect(afterAbort.flatMap(Self.serviceError)?.code == .noSuchUpload)
            let never = await #expect(throws: WebImageError.self) { try await client.headObject(abandoned) }
            #expect(never?.code == .badStatus(404))
        }
    }

    @Test("ListMultipartUploads names the uploads left open under a prefix, odd keys decoded; completed and aborted ones are gone")
    func pendingUploads() async throws {
        try await Harness.run { harness in
            let client = harness.client()
            let bucket = Self.bucket()
            try await client.putObject(S3Location(bucket: bucket, key: "elsewhere"), data: Data())
            let keys = ["run/00000.tar", "run/00001 é+&.tar", "run/00002.tar", "other/00000.tar"]
            var ids: [String: String] = [:]
            for key in keys { ids[key] = try await client.createMultipartUpload(S3Location(bucket: bucket, key: key)) }
            let done = S3Location(bucket: bucket, key: "run/00002.tar")
            let part = try await client.uploadPart(done, uploadID: ids[done.key]!, partNumber: 1, data: Data("whole".utf8))
            try await client.completeMultipartUpload(done, uploadID: ids[done.key]!, parts: [part])
            let pending = try await client.multipartUploads(bucket: bucket, prefix: "run/")
            #expect(Set(pending.map(\.key)) == ["run/00000.tar", "run/00001 é+&.tar"])
            #expect(Set(pending.map(\.uploadID)) == [ids["run/00000.tar"]!, ids["run/00001 é+&.tar"]!])
            for upload in pending {
                try await client.abortMultipartUpload(S3Location(bucket: bucket, key: upload.key), uploadID: upload.uploadID)
            }
            #expect(try await client.multipartUploads(bucket: bucket, prefix: "run/").isEmpty)
            #expect(try await client.multipartUploads(bucket: bucket).map(\.key) == ["other/00000.tar"])
        }
    }

    @Test("ListObjectsV2 pages with continuation tokens, decodes odd keys, rolls up prefixes; objects(bucket:prefix:) walks every page")
    func listing() async throws {
        try await Harness.run { harness in
            let client = harness.client()
            let bucket = Self.bucket()
            let keys = (0..<7).map { "list/item \($0)+é&<x>.png" } + ["list/sub/a.png", "list/sub/b.png", "elsewhere.png"]
            for key in keys { try await client.putObject(S3Location(bucket: bucket, key: key), data: Data(key.utf8)) }
            var pages: [S3ListPage] = []
            var token: String?
            repeat {
                let page = try await client.listObjects(bucket: bucket, prefix: "list/", continuationToken: token, maximumKeys: 3)
                pages.append(page)
                token = page.nextContinuationToken
            } while token != nil
            #expect(pages.count == 3)
            #expect(pages.flatMap(\.objects).map(\.key) == keys.filter { $0.hasPrefix("list/") }.sorted())
            #expect(pages.flatMap(\.objects).allSatisfy { $0.size == $0.key.utf8.count && $0.etag != nil && $0.lastModified != nil })
            let rolled = try await client.listObjects(bucket: bucket, prefix: "list/", delimiter: "/")
            #expect(rolled.commonPrefixes == ["list/sub/"])
            #expect(rolled.objects.count == 7)
            var streamed: [String] = []
            for try await object in client.objects(bucket: bucket) { streamed.append(object.key) }
            #expect(streamed == keys.sorted())
        }
    }

    @Test("a presigned URL lets a client with no credentials GET the object until it is changed; a tampered one is refused")
    func presignedURL() async throws {
        try await Harness.run { harness in
            let client = harness.client()
            let location = S3Location(bucket: Self.bucket(), key: "shared/a b.png")
            try await client.putObject(location, data: Data("presigned".utf8), contentType: "image/png")
            let url = try client.presignedURL(location, expires: 300)
            let http = HTTPClient(eventLoopGroupProvider: .singleton)
            let response = try await http.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(10))
            #expect(response.status.code == 200)
            #expect(try await response.body.collect(upTo: 1 << 20) == .init(string: "presigned"))
            let tampered = url.absoluteString.replacingOccurrences(of: "X-Amz-Expires=300", with: "X-Amz-Expires=301")
            let refused = try await http.execute(HTTPClientRequest(url: tampered), timeout: .seconds(10))
            #expect(refused.status.code == 403)
            _ = try await refused.body.collect(upTo: 1 << 20)
            try await http.shutdown()
            let unsigned = harness.client(signed: false)
            #expect(throws: WebImageError.self) { try unsigned.presignedURL(location) }
        }
    }

    @Test("versionId: on a versioned bucket, each PUT has a version and GET, HEAD and DELETE reach the one named")
    func versions() async throws {
        try await Harness.run { harness in
            let client = harness.client()
            let bucket = Self.bucket()
            try await client.putObject(S3Location(bucket: bucket, key: "first"), data: Data())
            _ = try await client.send(
                "PUT", S3Location(bucket: bucket, key: ""), query: [("versioning", "")],
                body: Data("<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>".utf8))
            let key = S3Location(bucket: bucket, key: "photo.jpg")
            let one = try await client.putObject(key, data: Data("one".utf8))
            let two = try await client.putObject(key, data: Data("two".utf8))
            let oldVersion = try #require(one.versionID)
            #expect(two.versionID != nil && two.versionID != oldVersion)
            #expect(try await client.getObject(key).data == Data("two".utf8))
            var old = key
            old.versionID = oldVersion
            #expect(try await client.getObject(old).data == Data("one".utf8))
            #expect(try await client.headObject(old).versionID == oldVersion)
            #expect(S3Location(url: old.url) == old)
            try await client.deleteObject(old)
            #expect(await (try? client.getObject(old)) == nil)
            #expect(try await client.getObject(key).data == Data("two".utf8))
        }
    }
}
