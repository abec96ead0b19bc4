import Foundation
import Testing
import WebImage
import WebImageS3
import WebImageTesting

/// `ImageManager` reading buckets through ``S3ImageLoader``: against SeaweedFS for the real
/// thing, and against the scripted origin standing in for S3 where the test must count the
/// requests (coalescing) or see the validators sent (revalidation).
@Suite("s3:// URLs through ImageManager")
struct S3ImageLoaderTests {
    static func png(width: Int, height: Int) throws -> Data {
        let pixels: [UInt8] = (0..<(width * height)).flatMap { index -> [UInt8] in [UInt8(index % 256), UInt8((index * 3) % 256), 90, 255] }
        return try CodersManager.shared.encode(Image(pixels: PixelBuffer(width: width, height: height, straightRGBA: pixels)), as: .png)
    }

    static func manager(_ loader: S3ImageLoader, directory: URL) throws -> ImageManager {
        ImageManager(
            cache: ImageCache(memory: MemoryCache(), disk: try DiskCache(directory: directory)),
            loader: LoadersManager(loaders: [loader]), configuration: ImageManagerConfiguration())
    }

    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("webimage-s3-loader-\(UUID().uuidString)")
    }

    @Test("an s3:// image loads, decodes and is cached: a new manager on the same disk answers from it; a missing key fails with 404")
    func loadsFromSeaweedFS() async throws {
        try await S3ClientTests.Harness.run { harness in
            let client = harness.client()
            let bucket = S3ClientTests.bucket()
            try await client.putObject(
                S3Location(bucket: bucket, key: "cats/a b.png"), data: try Self.png(width: 24, height: 16), contentType: "image/png")
            let directory = Self.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let url = S3Location(bucket: bucket, key: "cats/a b.png").url
            let first = try await Self.manager(S3ImageLoader(client: client), directory: directory).image(for: url)
            #expect(first.cacheType == .none)
            #expect(first.image?.pixelWidth == 24 && first.image?.pixelHeight == 16)
            let again = try await Self.manager(S3ImageLoader(client: client), directory: directory).image(for: url)
            #expect(again.cacheType == .disk)
            let bytes = try await Self.manager(S3ImageLoader(client: client), directory: directory).data(for: ImageRequest(url: url))
            #expect(bytes.metadata.contentType == "image/png" && bytes.metadata.etag != nil)
            let missing = await #expect(throws: WebImageError.self) {
                try await Self.manager(S3ImageLoader(client: client), directory: directory)
                    .image(for: S3Location(bucket: bucket, key: "cats/none.png").url)
            }
            #expect(missing?.code == .badStatus(404))
        }
    }

    @Test("loads of one s3:// URL share one GET; a refresh sends the ETag and a 304 keeps the cached image")
    func coalescesAndRevalidates() async throws {
        let origin = try await OriginServer.start()
        let client = S3Client(
            configuration: S3Configuration(
                endpoint: URL(string: "http://127.0.0.1:\(origin.port)")!, usesPathStyle: true,
                credentials: S3Credentials(accessKeyID: "AKID", secretAccessKey: "secret")))
        let directory = Self.temporaryDirectory()
        do {
            let png = try Self.png(width: 8, height: 8)
            origin.route(
                "/photos/slow.png",
                OriginResponse(
                    headers: [("Content-Type", "image/png")], body: [UInt8](png), headerDelay: .milliseconds(200), etag: "\"v1\""))
            let manager = try Self.manager(S3ImageLoader(client: client), directory: directory)
            let url = URL(string: "s3://photos/slow.png")!
            try await withThrowingTaskGroup(of: ImageResult.self) { group in
                for _ in 0..<10 { group.addTask { try await manager.image(for: url, options: .waitStoreCache) } }
                for try await result in group { #expect(result.image?.pixelWidth == 8) }
            }
            #expect(origin.requests(to: "/photos/slow.png").count == 1)
            let refreshed = try await manager.image(for: ImageRequest(url: url, options: [.refreshCached]))
            #expect(refreshed.image?.pixelWidth == 8 && refreshed.cacheType == .memory, "the 304 keeps the cached image")
            let requests = origin.requests(to: "/photos/slow.png")
            #expect(requests.count == 2)
            #expect(requests.last?.header("If-None-Match") == "\"v1\"")
            #expect(requests.last?.header("Authorization")?.hasPrefix("AWS4-HMAC-SHA256") == true)
        } catch {
            try? await client.shutdown()
            try? await origin.shutdown()
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        try await client.shutdown()
        try await origin.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }

    @Test("only s3: URLs; a malformed one is invalidURL")
    func claims() async throws {
        let loader = S3ImageLoader(client: S3Client(configuration: S3Configuration()))
        #expect(loader.canLoad(URL(string: "s3://b/k")!) && loader.canLoad(URL(string: "S3://b/k")!))
        #expect(!loader.canLoad(URL(string: "https://b/k")!))
        let error = await #expect(throws: WebImageError.self) { try await loader.loadData(URL(string: "s3://bucket-only")!) }
        #expect(error?.code == .invalidURL)
        try await loader.client.shutdown()
    }
}
