import Foundation
import Testing
@testable import WebImage
@testable import WebImageCaching
import WebImageTestSupport

@Suite("ImageCache")
struct ImageCacheTests {
    private func makeCache(_ directory: TemporaryDirectory, memory: MemoryCache<Image> = MemoryCache()) throws -> ImageCache {
        ImageCache(memory: memory, disk: try DiskCache(directory: directory.url))
    }

    private func jpeg() throws -> (image: Image, data: Data) {
        let data = try Fixture.data("gradient.jpg")
        return (try CodersManager.shared.decode(data), data)
    }

    @Test("a memory hit answers with the image and no bytes")
    func memoryHit() async throws {
        let directory = try TemporaryDirectory()
        let cache = try makeCache(directory)
        let (image, data) = try jpeg()
        let key = CacheKey("https://x.com/a.jpg")
        try await cache.store(image, data: data, for: key)
        let hit = await cache.query(key)
        #expect(hit.cacheType == .memory && hit.image == image && hit.data == nil)
        #expect(cache.memoryImage(for: key) == image)
    }

    @Test("a disk hit decodes, promotes to memory, and keeps the data")
    func diskHit() async throws {
        let directory = try TemporaryDirectory()
        let (image, data) = try jpeg()
        let key = CacheKey("https://x.com/a.jpg")
        try await makeCache(directory).store(image, data: data, for: key)
        let fresh = try makeCache(directory)
        let first = await fresh.query(key)
        #expect(first.cacheType == .disk)
        #expect(first.data == data)
        #expect(first.image?.pixelWidth == 64)
        #expect(await fresh.query(key).cacheType == .memory)
        #expect(fresh.diskImageExists(for: key))
        #expect(fresh.totalDiskSize == data.count + DiskCacheSegments.headerSize && fresh.diskCount == 1, "a small JPEG is packed")
    }

    @Test("an image stored without data is written as PNG with alpha, JPEG without")
    func encodingRule() async throws {
        let directory = try TemporaryDirectory()
        let cache = try makeCache(directory)
        let translucent = try CodersManager.shared.decode(try Fixture.data("gradient-rgba.png"))
        let opaque = try jpeg().image
        try await cache.store(translucent, data: nil, for: CacheKey("alpha"))
        try await cache.store(opaque, data: nil, for: CacheKey("opaque"))
        #expect(ImageFormat(sniffing: try #require(try cache.disk?.data(for: "alpha"))) == .png)
        #expect(ImageFormat(sniffing: try #require(try cache.disk?.data(for: "opaque"))) == .jpeg)
        let back = try makeCache(directory).imageFromDisk(for: CacheKey("alpha"))
        #expect(back?.pixels == translucent.pixels)
    }

    @Test("queryMemoryData reads the data too, in the pool or, with the Sync options, on the caller's thread")
    func queryOptions() async throws {
        let directory = try TemporaryDirectory()
        // A pool of one held by a job: a read that went to the pool could not finish, so the
        // Sync options' answers prove the read happened on the caller's thread.
        let pool = WorkPool(width: 1)
        let cache = ImageCache(
            memory: MemoryCache(), disk: try DiskCache(directory: directory.url), coders: .shared, configuration: ImageCacheConfiguration(),
            telemetry: .default, workPool: pool)
        let (image, data) = try jpeg()
        let key = CacheKey("k")
        try await cache.store(image, data: data, for: key)
        let withData = await cache.query(key, options: .queryMemoryData)
        #expect(withData.cacheType == .memory && withData.data == data)

        let gate = DispatchSemaphore(value: 0)
        pool.submit(priority: .high) { gate.wait() }
        let inline = await cache.query(key, options: [.queryMemoryData, .queryMemoryDataSync])
        #expect(inline.cacheType == .memory && inline.data == data)
        await cache.clear(.memory)
        let fromDisk = await cache.query(key, options: .queryDiskDataSync)
        #expect(fromDisk.cacheType == .disk && fromDisk.data == data)
        gate.signal()
    }

    @Test("a query cancelled while its disk read waits in the pool is a miss at once, and the read never runs")
    func cancelledQuery() async throws {
        let directory = try TemporaryDirectory()
        // A pool of one, held by a job until the query is cancelled: the query waits behind it.
        let pool = WorkPool(width: 1)
        let cache = ImageCache(
            memory: MemoryCache(), disk: try DiskCache(directory: directory.url), coders: .shared, configuration: ImageCacheConfiguration(),
            telemetry: .default, workPool: pool)
        let (image, data) = try jpeg()
        try await cache.store(image, data: data, for: CacheKey("k"), cacheType: .disk)
        let gate = DispatchSemaphore(value: 0)
        pool.submit(priority: .high) { gate.wait() }
        let query = Task { await cache.query(CacheKey("k")) }
        try await pool.waitUntilQueued(1)
        query.cancel()
        #expect(await query.value.cacheType == .none, "answered while the pool is still held")
        gate.signal()
        // Everything queued before this job has started (one slot, arrival order).
        try await pool.run(priority: .low) { () throws(WebImageError) in }
        #expect(cache.memoryImage(for: CacheKey("k")) == nil, "the cancelled read never decoded the entry into memory")
    }

    @Test("avoidDecodeImage returns the data alone")
    func avoidDecode() async throws {
        let directory = try TemporaryDirectory()
        let cache = try makeCache(directory)
        let (image, data) = try jpeg()
        try await cache.store(image, data: data, for: CacheKey("k"), cacheType: .disk)
        let result = await cache.query(CacheKey("k"), options: .avoidDecodeImage)
        #expect(result.cacheType == .disk && result.image == nil && result.data == data)
        #expect(cache.memoryImage(for: CacheKey("k")) == nil)
    }

    @Test("the key's thumbnail and scale shape the decoded image")
    func variantDecoding() async throws {
        let directory = try TemporaryDirectory()
        let cache = try makeCache(directory)
        let data = try Fixture.data("gradient.jpg")
        let thumbnailKey = CacheKey("https://x.com/a.jpg", thumbnail: .init(width: 16, height: 12))
        try await cache.store(nil, data: data, for: thumbnailKey)
        #expect(await cache.query(thumbnailKey).image?.pixelWidth == 16)
        let retinaKey = CacheKey("https://x.com/icon@2x.jpg")
        try await cache.store(nil, data: data, for: retinaKey)
        #expect(await cache.query(retinaKey).image?.scale == 2)
    }

    @Test("bytes that no longer decode are a miss and are removed")
    func undecodable() async throws {
        let directory = try TemporaryDirectory()
        let cache = try makeCache(directory)
        try await cache.store(nil, data: Data("<html>not an image</html>".utf8), for: CacheKey("bad"))
        #expect(await cache.query(CacheKey("bad")).cacheType == .none)
        #expect(!cache.diskImageExists(for: CacheKey("bad")))
    }

    @Test("cache types choose the tiers for store, query, contains, remove and clear")
    func tiers() async throws {
        let directory = try TemporaryDirectory()
        let cache = try makeCache(directory)
        let (image, data) = try jpeg()
        try await cache.store(image, data: data, for: CacheKey("m"), cacheType: .memory)
        try await cache.store(image, data: data, for: CacheKey("d"), cacheType: .disk)
        #expect(await cache.contains(CacheKey("m")) == .memory)
        #expect(await cache.contains(CacheKey("d")) == .disk)
        #expect(await cache.query(CacheKey("m"), cacheType: .disk).cacheType == .none)
        #expect(await cache.query(CacheKey("d"), cacheType: .memory).cacheType == .none)
        await cache.remove(CacheKey("d"), cacheType: .disk)
        #expect(await cache.contains(CacheKey("d")) == .none)
        await cache.clear(.memory)
        #expect(await cache.contains(CacheKey("m")) == .none)
        try await cache.store(image, data: data, for: CacheKey("x"))
        await cache.clear(.disk)
        #expect(cache.diskCount == 0)
    }

    @Test("a memory-only cache works without a disk")
    func memoryOnly() async throws {
        let cache = ImageCache(disk: nil)
        let (image, data) = try jpeg()
        try await cache.store(image, data: data, for: CacheKey("k"))
        #expect(await cache.query(CacheKey("k")).cacheType == .memory)
        await cache.clear(.memory)
        #expect(await cache.query(CacheKey("k")).cacheType == .none)
    }
}

@Suite("CacheChain")
struct CacheChainTests {
    private func tier() -> ImageCache { ImageCache(disk: nil) }

    private let image = Image(pixels: PixelBuffer(width: 1, height: 1, premultipliedRGBA: [1, 2, 3, 255]))

    @Test("by default, stores go to the highest-priority cache and queries go serially")
    func defaults() async throws {
        let low = tier()
        let high = tier()
        let chain = CacheChain(caches: [low, high])
        try await chain.store(image, data: nil, for: CacheKey("k"), cacheType: .memory)
        #expect(await high.contains(CacheKey("k"), cacheType: .all) == .memory)
        #expect(await low.contains(CacheKey("k"), cacheType: .all) == .none)
        try await low.store(image, data: nil, for: CacheKey("only-low"), cacheType: .memory)
        #expect(await chain.query(CacheKey("only-low"), options: [], cacheType: .all).image == image)
        #expect(await chain.contains(CacheKey("only-low"), cacheType: .all) == .memory)
        #expect(await chain.query(CacheKey("nowhere"), options: [], cacheType: .all).cacheType == .none)
    }

    @Test("concurrent and lowest-only policies")
    func policies() async throws {
        let low = tier()
        let high = tier()
        let everywhere = CacheChain(caches: [low, high], queryPolicy: .concurrent, storePolicy: .concurrent)
        try await everywhere.store(image, data: nil, for: CacheKey("k"), cacheType: .memory)
        #expect(low.memoryImage(for: CacheKey("k")) != nil && high.memoryImage(for: CacheKey("k")) != nil)
        #expect(await everywhere.query(CacheKey("k"), options: [], cacheType: .all).isHit)
        let lowest = CacheChain(caches: [low, high], queryPolicy: .lowestOnly, storePolicy: .lowestOnly)
        try await lowest.store(image, data: nil, for: CacheKey("l"), cacheType: .memory)
        #expect(low.memoryImage(for: CacheKey("l")) != nil && high.memoryImage(for: CacheKey("l")) == nil)
        try await high.store(image, data: nil, for: CacheKey("h"), cacheType: .memory)
        #expect(await lowest.query(CacheKey("h"), options: [], cacheType: .all).cacheType == .none)
        await everywhere.remove(CacheKey("k"), cacheType: .all)
        #expect(low.memoryImage(for: CacheKey("k")) == nil && high.memoryImage(for: CacheKey("k")) == nil)
        await everywhere.clear(.all)
        #expect(low.memory.count == 0 && high.memory.count == 0)
    }

    @Test("a store error from one cache is reported after the others stored")
    func storeErrors() async throws {
        let full = try TemporaryDirectory()
        let refusing = ImageCache(disk: try DiskCache(directory: full.url, configuration: DiskCacheConfiguration(sizeLimit: 1)))
        let accepting = tier()
        let chain = CacheChain(caches: [accepting, refusing], storePolicy: .serial)
        await #expect(throws: WebImageError(.tooLarge)) {
            try await chain.store(nil, data: Data(repeating: 1, count: 10), for: CacheKey("k"), cacheType: .disk)
        }
        try await chain.store(image, data: nil, for: CacheKey("m"), cacheType: .memory)
        #expect(accepting.memoryImage(for: CacheKey("m")) != nil)
    }
}
