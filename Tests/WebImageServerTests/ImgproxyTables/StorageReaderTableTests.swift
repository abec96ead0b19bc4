import Foundation
import Testing
import WebImage
import WebImageGCS
import WebImageS3
import WebImageTestSupport
import WebImageTesting

@testable import WebImageServer

/// imgproxy's storage reader suite (`storage/testsuite/reader.go`, v4 eef3b312), which its file
/// system, S3 and Cloud Storage readers each run, as ours: through the proxy, on `local:///`
/// files, SeaweedFS and fake-gcs-server. Every conditional request asks with other options, so
/// that no stored result answers it and the source decides, as imgproxy's storage does.
/// `TestRangeRequest` has no counterpart: the proxy asks its sources for whole objects.
@Suite("imgproxy's tables: storage readers (storage/testsuite/reader.go)", .serialized)
struct ImgproxyStorageReaderTableTests {
    /// The suite's checks on one storage: `object` names the test object, `missing` an object that
    /// is not there, `noContainer` one in a bucket that is not there (nil for files).
    static func readerRows(_ harness: ServerHarness, object: String, missing: String, noContainer: String?) async throws {
        var width = 0
        func get(_ source: String, _ headers: [(String, String)] = []) async throws -> ServerHarness.Answer {
            width += 1
            return try await harness.get(harness.signer.sign("/w:\(width)/plain/\(source)@png"), headers: headers)
        }
        // TestETagEnabled and TestLastModifiedEnabled.
        let first = try await get(object)
        #expect(first.status == 200, "\(first.text)")
        let etag = try #require(first.header("ETag"))
        let lastModified = try #require(first.header("Last-Modified"))
        // TestIfNoneMatchReturns304 and TestUpdatedETagReturns200.
        #expect(try await get(object, [("If-None-Match", etag)]).status == 304)
        #expect(try await get(object, [("If-None-Match", etag + "_wrong")]).status == 200)
        // TestIfModifiedSinceReturns304 and TestUpdatedLastModifiedReturns200.
        #expect(try await get(object, [("If-Modified-Since", lastModified)]).status == 304)
        let earlier = try #require(HTTPDate.parse(lastModified)).addingTimeInterval(-60)
        #expect(try await get(object, [("If-Modified-Since", HTTPDate.format(earlier))]).status == 200)
        // TestObjectNotFound and TestContainerNotFound.
        #expect(try await get(missing).status == 404)
        if let noContainer { #expect(try await get(noContainer).status == 404) }
    }

    @Test("the file system's reader: local:///")
    func files() async throws {
        let root = try TemporaryDirectory("storage-reader")
        try S3Seeding.png(width: 8, height: 8).write(to: root.url.appendingPathComponent("test.png"))
        var configuration = ServerHarness.configuration()
        configuration.localFilesystemRoot = root.path
        try await ServerHarness.inProcess(configuration) { harness throws in
            try await Self.readerRows(harness, object: "local:///test.png", missing: "local:///nonexistent/object.png", noContainer: nil)
        }
    }

    @Test("S3's reader: s3:// on SeaweedFS")
    func s3() async throws {
        let server = try await S3TestServer.shared()
        let bucket = S3Seeding.bucket()
        _ = try await S3Seeding.seed(server, [(S3Location(bucket: bucket, key: "test.png"), try S3Seeding.png(width: 8, height: 8))])
        try await ServerHarness.inProcess(ServerS3SourceTests.configuration(server)) { harness throws in
            try await Self.readerRows(
                harness, object: "s3://\(bucket)/test.png", missing: "s3://\(bucket)/nonexistent/object.png",
                noContainer: "s3://\(S3Seeding.bucket())/test.png")
        }
    }

    @Test("Cloud Storage's reader: gs:// on fake-gcs-server")
    func gcs() async throws {
        try await ServerGCSSourceTests.withEmulator { emulator in
            try await emulator.createBucket("container")
            try await emulator.put(
                try S3Seeding.png(width: 8, height: 8), bucket: "container", object: "test.png", contentType: "image/png")
            try await ServerHarness.inProcess(ServerGCSSourceTests.configuration(emulator)) { harness throws in
                try await Self.readerRows(
                    harness, object: "gs://container/test.png", missing: "gs://container/nonexistent/object.png",
                    noContainer: "gs://nonexistent-container/test.png")
            }
        }
    }
}
