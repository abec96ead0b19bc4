import Foundation
import Testing
import WebImageTesting
@testable import WebImage
import WebImageTestSupport

/// `ImageManager.data(for:)`: bytes with the response's metadata, through the manager's cache,
/// freshness and coalescing, never decoded (the proxy fetches its sources through it).
@Suite("Byte fetches through the manager")
struct ImageDataTests {
    private let lastModified = "Sun, 06 Nov 1994 08:49:37 GMT"

    private func serve(_ harness: ManagerHarness, _ path: String, body: [UInt8], cacheControl: String? = nil, headerDelay: Duration = .zero)
    {
        var headers = [("Content-Type", "image/png")]
        if let cacheControl { headers.append(("Cache-Control", cacheControl)) }
        harness.origin.route(
            path, OriginResponse(headers: headers, body: body, headerDelay: headerDelay, etag: "\"v1\"", lastModified: lastModified))
    }

    @Test("the loader's bytes with their content type and validators, then the disk's with the same; never decoded, no memory entry")
    func bytesAndMetadata() async throws {
        try await ManagerHarness.run { harness in
            let manager = try harness.makeManager()
            serve(harness, "/a.png", body: [UInt8](harness.png))
            let url = harness.origin.url("/a.png")
            let loaded = try await manager.data(for: ImageRequest(url: url))
            #expect(loaded.data == harness.png)
            #expect(loaded.cacheType == .none)
            #expect(loaded.finalURL == url)
            #expect(loaded.metadata.contentType == "image/png")
            #expect(loaded.metadata.etag == "\"v1\"")
            #expect(loaded.metadata.lastModified == lastModified)
            // Stored before data(for:) returned: the disk answers at once, with the same metadata.
            let cached = try await manager.data(for: ImageRequest(url: url))
            #expect(cached.cacheType == .disk)
            #expect(cached.data == harness.png)
            #expect(cached.metadata.etag == "\"v1\"" && cached.metadata.lastModified == lastModified)
            #expect(harness.origin.requestCount("/a.png") == 1)
            #expect(harness.coder.decodes.load(ordering: .relaxed) == 0, "bytes are never decoded")
            #expect(manager.cache.memoryImage(for: CacheKey(url.absoluteString)) == nil, "the memory tier holds decoded images only")
            // An image load of the URL decodes the bytes the fetch stored, without a request.
            let image = try await manager.image(for: url)
            #expect(image.cacheType == .disk && image.image != nil)
            #expect(harness.origin.requestCount("/a.png") == 1)
        }
    }

    @Test("bytes that are no image come back as they are: a byte fetch does not judge them")
    func notAnImage() async throws {
        try await ManagerHarness.run { harness in
            let manager = try harness.makeManager()
            let text = Array("not an image".utf8)
            serve(harness, "/text", body: text)
            let fetched = try await manager.data(for: ImageRequest(url: harness.origin.url("/text")))
            #expect(fetched.data == Data(text))
            await #expect(throws: WebImageError.self) { try await manager.image(for: harness.origin.url("/text")) }
        }
    }

    @Test("with a transformer on the manager the bytes are kept under the original's key, where a transformed load finds them")
    func originalKey() async throws {
        try await ManagerHarness.run { harness in
            let transformer = CountingTransformer()
            let manager = try harness.makeManager(transformer: transformer)
            serve(harness, "/b.png", body: [UInt8](harness.png))
            let url = harness.origin.url("/b.png")
            _ = try await manager.data(for: ImageRequest(url: url))
            #expect(manager.cache.storedData(for: CacheKey(url.absoluteString)) == harness.png)
            #expect(transformer.calls.load(ordering: .relaxed) == 0)
            let transformed = try await manager.image(for: url)
            #expect(transformed.image?.pixelWidth == 8, "made from the original's bytes on disk")
            #expect(harness.origin.requestCount("/b.png") == 1)
        }
    }

    @Test("ten concurrent byte fetches of one URL make one request")
    func coalesced() async throws {
        try await ManagerHarness.run { harness in
            let manager = try harness.makeManager()
            // The answer waits a second, so every fetch joins the first before it ends.
            serve(harness, "/c.png", body: [UInt8](harness.png), headerDelay: .seconds(1))
            let url = harness.origin.url("/c.png")
            let sizes = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<10 { group.addTask { try await manager.data(for: ImageRequest(url: url)).data.count } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(sizes == Array(repeating: harness.png.count, count: 10))
            #expect(harness.origin.requestCount("/c.png") == 1)
        }
    }

    @Test("a stale entry is revalidated with If-None-Match; the 304 keeps the bytes and renews the metadata")
    func revalidated() async throws {
        try await ManagerHarness.run { harness in
            let clock = Locked(Date())
            let manager = ImageManager(
                cache: try harness.makeCache(), loader: harness.downloader, coders: harness.coders,
                configuration: ImageManagerConfiguration(cacheFreshness: .respectCacheControl(now: { clock.withLock { $0 } })))
            serve(harness, "/d.png", body: [UInt8](harness.png), cacheControl: "max-age=60")
            let url = harness.origin.url("/d.png")
            let first = try await manager.data(for: ImageRequest(url: url))
            let firstUntil = try #require(first.metadata.freshness?.freshUntil)
            clock.withLock { $0 += 30 }
            #expect(try await manager.data(for: ImageRequest(url: url)).cacheType == .disk)
            #expect(harness.origin.requestCount("/d.png") == 1, "fresh: no request")
            clock.withLock { $0 += 60 }
            let renewed = try await manager.data(for: ImageRequest(url: url))
            let requests = harness.origin.requests(to: "/d.png")
            #expect(requests.count == 2)
            #expect(requests.last?.header("If-None-Match") == "\"v1\"")
            #expect(renewed.cacheType == .disk && renewed.data == harness.png)
            #expect(try #require(renewed.metadata.freshness?.freshUntil) > firstUntil, "the 304 renewed the stored freshness")
        }
    }

    @Test(".fromCacheOnly misses without a request; a failed fetch is a typed error")
    func failures() async throws {
        try await ManagerHarness.run { harness in
            let manager = try harness.makeManager()
            let url = harness.origin.url("/missing.png")
            await #expect {
                try await manager.data(for: ImageRequest(url: url, options: .fromCacheOnly))
            } throws: { ($0 as? WebImageError)?.code == .cacheMiss }
            #expect(harness.origin.requestCount("/missing.png") == 0)
            harness.origin.route("/missing.png", .status(404))
            await #expect {
                try await manager.data(for: ImageRequest(url: url))
            } throws: { ($0 as? WebImageError)?.code == .badStatus(404) }
        }
    }
}
