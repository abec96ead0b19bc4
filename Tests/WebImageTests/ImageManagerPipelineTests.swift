import Dispatch
import Foundation
import Synchronization
import Testing
import WebImage
import WebImageTesting
import WebImageTestSupport

@Suite("ImageManager pipeline")
struct ImageManagerPipelineTests {
    @Test(".refreshCached: the cached image at once, a conditional request, and a 304 ends without a second image")
    func refreshNotModified() async throws {
        try await ManagerHarness.run { harness in
            harness.servePNG("/r.png", etag: "\"v1\"")
            let url = harness.origin.url("/r.png")
            let manager = try harness.makeManager()
            _ = try await manager.image(for: url, options: .waitStoreCache)
            // The callback load and the stream share one revalidation; the stream ends when it does.
            let deliveries = Deliveries()
            _ = try #require(manager.loadImage(with: url, options: .refreshCached, completed: deliveries.completion))
            var streamed: [ImageCacheType] = []
            for try await result in manager.images(for: ImageRequest(url: url, options: .refreshCached)) {
                streamed.append(result.cacheType)
            }
            #expect(streamed == [.memory], "a 304 brings no second image")
            #expect(try await deliveries.result().get().cacheType == .memory)
            #expect(harness.origin.requestCount("/r.png") == 2)
            #expect(harness.origin.requests(to: "/r.png").last?.header("If-None-Match") == "\"v1\"")
            #expect(deliveries.count == 1)
            let last = try await manager.image(for: url, options: .refreshCached)
            #expect(last.cacheType == .memory, "the async API returns the cached image when nothing changed")
        }
    }

    @Test(".refreshCached delivers the new image when the origin changed it")
    func refreshChanged() async throws {
        try await ManagerHarness.run { harness in
            let url = harness.origin.url("/r.png")
            harness.origin.route(
                "/r.png",
                sequence: [
                    OriginResponse(headers: [("Content-Type", "image/png")], body: [UInt8](harness.png), etag: "\"v1\""),
                    OriginResponse(headers: [("Content-Type", "image/jpeg")], body: [UInt8](harness.jpeg), etag: "\"v2\""),
                ])
            let manager = try harness.makeManager()
            _ = try await manager.image(for: url, options: .waitStoreCache)
            var seen: [ImageResult] = []
            for try await result in manager.images(for: ImageRequest(url: url, options: [.refreshCached, .waitStoreCache])) {
                seen.append(result)
            }
            #expect(seen.map(\.cacheType) == [.memory, .none])
            #expect(seen.last?.data == harness.jpeg)
            #expect(try await manager.image(for: url, options: .fromCacheOnly).image?.sourceFormat == .jpeg)
        }
    }

    @Test("a transformed load stores the original bytes and the variant; another variant reuses the original bytes")
    func variants() async throws {
        try await ManagerHarness.run { harness in
            harness.servePNG("/v.png")
            let url = harness.origin.url("/v.png")
            let cache = try harness.makeCache()
            let manager = try harness.makeManager(cache: cache)
            var context = LoadContext()
            context.imageTransformer = ResizingTransformer(width: 10, height: 10)
            let small = try await manager.image(for: url, options: .waitStoreCache, context: context)
            #expect(small.image?.pixelWidth == 10)
            #expect(cache.diskImageExists(for: CacheKey(url.absoluteString)), "the original bytes are on disk")
            #expect(try cache.disk?.data(for: url.absoluteString) == harness.png)
            #expect(cache.diskImageExists(for: manager.variantKey(for: url, context: context)))
            #expect(cache.memoryImage(for: CacheKey(url.absoluteString)) == nil, "the original image is not kept in memory")

            var other = LoadContext()
            other.imageTransformer = TransformSpecTransformer("flip:h")
            let flipped = try await manager.image(for: url, context: other)
            #expect(flipped.cacheType == .disk && flipped.image?.pixelWidth == 64)
            #expect(harness.origin.requestCount("/v.png") == 1, "the second variant came from the original bytes")

            var thumbnail = LoadContext()
            thumbnail.imageThumbnailPixelSize = (width: 16, height: 16)
            let thumb = try await manager.image(for: url, options: .waitStoreCache, context: thumbnail)
            #expect(thumb.image.map { $0.pixelWidth <= 16 && $0.pixelHeight <= 16 } == true)
            #expect(thumb.image?.pixelWidth == 16 && thumb.image?.pixelHeight == 12)
            // The variant's entry is the thumbnail, not the original's bytes stored again.
            let stored = try #require(try cache.disk?.data(for: manager.variantKey(for: url, context: thumbnail).stringValue))
            #expect(stored != harness.png && stored.count < harness.png.count)
            let reread = try CodersManager.shared.decode(stored)
            #expect((reread.pixelWidth, reread.pixelHeight) == (16, 12))
        }
    }

    @Test("animated images are transformed only with .transformAnimatedImage")
    func animatedTransform() async throws {
        try await ManagerHarness.run { harness in
            let gif = try Fixture.data("animated.gif")
            harness.origin.route("/a.gif", .ok([UInt8](gif), contentType: "image/gif"))
            let transformer = CountingTransformer(width: 4, height: 4)
            let manager = try harness.makeManager(transformer: transformer)
            let untouched = try await manager.image(for: harness.origin.url("/a.gif"))
            #expect(untouched.image?.isAnimated == true && untouched.image?.pixelWidth != 4)
            #expect(transformer.calls.load(ordering: .relaxed) == 0)
            let transformed = try await manager.image(
                for: harness.origin.url("/a.gif"), options: [.transformAnimatedImage, .fromLoaderOnly])
            #expect(transformed.image?.frames.count == untouched.image?.frames.count)
            #expect(transformed.image?.frames.allSatisfy { $0.pixels.width == 4 } == true)
            let first = try await manager.image(for: harness.origin.url("/a.gif"), options: [.decodeFirstFrameOnly, .fromLoaderOnly])
            #expect(first.image?.frames.count == 1)
        }
    }

    @Test(".avoidDecodeImage delivers bytes only; store cache types decide where results go")
    func avoidDecodeAndStoreTypes() async throws {
        try await ManagerHarness.run { harness in
            harness.servePNG("/d.png")
            let url = harness.origin.url("/d.png")
            let cache = try harness.makeCache()
            let manager = try harness.makeManager(cache: cache)
            let bytes = try await manager.image(for: url, options: [.avoidDecodeImage, .waitStoreCache])
            #expect(bytes.image == nil && bytes.data == harness.png)
            #expect(harness.coder.decodes.load(ordering: .relaxed) == 0)
            #expect(
                cache.memoryImage(for: CacheKey(url.absoluteString)) == nil && cache.diskImageExists(for: CacheKey(url.absoluteString)))

            harness.servePNG("/m.png")
            var memoryOnly = LoadContext()
            memoryOnly.storeCacheType = .memory
            _ = try await manager.image(for: harness.origin.url("/m.png"), options: .waitStoreCache, context: memoryOnly)
            #expect(cache.memoryImage(for: CacheKey(harness.origin.url("/m.png").absoluteString)) != nil)
            #expect(!cache.diskImageExists(for: CacheKey(harness.origin.url("/m.png").absoluteString)))

            harness.servePNG("/n.png")
            var nowhere = LoadContext()
            nowhere.storeCacheType = ImageCacheType.none
            _ = try await manager.image(for: harness.origin.url("/n.png"), options: .waitStoreCache, context: nowhere)
            #expect(await cache.contains(CacheKey(harness.origin.url("/n.png").absoluteString)) == .none)

            harness.origin.route(
                "/private.png",
                OriginResponse(headers: [("Content-Type", "image/png"), ("Cache-Control", "no-store")], body: [UInt8](harness.png)))
            _ = try await manager.image(for: harness.origin.url("/private.png"), options: .waitStoreCache)
            #expect(await cache.contains(CacheKey(harness.origin.url("/private.png").absoluteString)) == .none, "no-store is honoured")
        }
    }

    @Test("query options: memory data (sync and async) and a synchronous disk read")
    func queryOptions() async throws {
        try await ManagerHarness.run { harness in
            harness.servePNG("/q.png")
            let url = harness.origin.url("/q.png")
            let manager = try harness.makeManager()
            _ = try await manager.image(for: url, options: .waitStoreCache)

            let inline = Locked<ImageResult?>(nil)
            manager.loadImage(with: url, options: [.queryMemoryData, .queryMemoryDataSync]) { result in
                inline.withLock { $0 = try? result.get() }
            }
            #expect(inline.withLock { $0?.data } == harness.png, "read on the calling thread")
            let async = Deliveries()
            #expect(manager.loadImage(with: url, options: .queryMemoryData, completed: async.completion) != nil)
            #expect(try await async.result().get().data == harness.png)

            let fresh = try harness.makeManager()
            let fromDisk = Locked<ImageResult?>(nil)
            let operation = fresh.loadImage(with: url, options: .queryDiskDataSync) { result in fromDisk.withLock { $0 = try? result.get() }
            }
            #expect(operation == nil && fromDisk.withLock { $0?.cacheType } == .disk)
        }
    }

    @Test("progress reaches the caller; a progressive load shows partial images, never stored, before the final one")
    func progressAndPartialImages() async throws {
        try await ManagerHarness.run { harness in
            let jpeg = try Fixture.data("large-progressive.jpg")
            // The origin stalls after two thirds: partial images must come whatever the machine's load.
            harness.origin.route(
                "/stalled.jpg",
                OriginResponse(headers: [("Content-Type", "image/jpeg")], body: [UInt8](jpeg), delivery: .stall(after: jpeg.count * 2 / 3)))
            let manager = try harness.makeManager()
            var partial: ImageResult?
            for try await result in manager.images(for: ImageRequest(url: harness.origin.url("/stalled.jpg"), options: .progressiveLoad)) {
                partial = result
                break
            }
            #expect(partial?.isFinished == false && partial?.image?.pixelWidth == 320 && partial?.data == nil)
            #expect(
                await manager.cache.contains(CacheKey(harness.origin.url("/stalled.jpg").absoluteString), cacheType: .all)
                    == ImageCacheType.none)

            harness.origin.route(
                "/p.jpg",
                OriginResponse(
                    headers: [("Content-Type", "image/jpeg")], body: [UInt8](jpeg), delivery: .drip(bytes: 400, every: .milliseconds(10))))
            let deliveries = Deliveries()
            manager.loadImage(
                with: harness.origin.url("/p.jpg"), options: .progressiveLoad, progress: deliveries.progressHandler,
                completed: deliveries.completion)
            try await deliveries.log.waitFor(timeout: .seconds(20), "the final image") { (try? $0.get().isFinished) == true }
            let results = deliveries.all.compactMap { try? $0.get() }
            #expect(results.dropLast().allSatisfy { !$0.isFinished && $0.data == nil })
            #expect(results.last?.isFinished == true && results.last?.data == jpeg)
            let progress = deliveries.progress.withLock { $0 }
            #expect(progress.count >= 3 && progress.last?.0 == Int64(jpeg.count) && progress.last?.1 == Int64(jpeg.count))
            #expect(await manager.cache.contains(CacheKey(harness.origin.url("/p.jpg").absoluteString), cacheType: .memory) == .memory)
        }
    }

    @Test("a cache key filter, a serializer and an options processor take part")
    func keyFilterSerializerProcessor() async throws {
        try await ManagerHarness.run { harness in
            harness.servePNG("/k.png")
            let filter = CacheKeyFilter { url in url.absoluteString.components(separatedBy: "?").first }
            let serializer = CacheSerializer { image, _, _ in
                try? CodersManager.shared.encode(image, as: .webP, options: EncodeOptions(lossless: true))
            }
            let processor = OptionsProcessor { url, options, context in
                url.path.hasSuffix("offline.png") ? (options.union(.fromCacheOnly), context) : (options, context)
            }
            let cache = try harness.makeCache()
            let manager = try harness.makeManager(
                cache: cache, cacheKeyFilter: filter, cacheSerializer: serializer, optionsProcessor: processor)
            _ = try await manager.image(for: harness.origin.url("/k.png?signature=1"), options: .waitStoreCache)
            let second = try await manager.image(for: harness.origin.url("/k.png?signature=2"))
            #expect(second.cacheType == .memory)
            let key = harness.origin.url("/k.png").absoluteString
            #expect(ImageFormat(sniffing: try #require(try cache.disk?.data(for: key))) == .webP)
            await #expect(throws: WebImageError(.cacheMiss)) { try await manager.image(for: harness.origin.url("/offline.png")) }
        }
    }

    @Test("callbacks run on the chosen dispatch queue")
    func callbackQueue() async throws {
        try await ManagerHarness.run { harness in
            harness.servePNG("/cb.png")
            let queue = DispatchQueue(label: "callbacks")
            let marker = DispatchSpecificKey<Bool>()
            queue.setSpecific(key: marker, value: true)
            var context = LoadContext()
            context.callbackQueue = .dispatch(queue)
            let onQueue = EventLog<Bool>()
            let manager = try harness.makeManager()
            manager.loadImage(with: harness.origin.url("/cb.png"), context: context) { _ in
                onQueue.record(DispatchQueue.getSpecific(key: marker) == true)
            }
            manager.loadImage(with: nil as URL?, context: context) { _ in onQueue.record(DispatchQueue.getSpecific(key: marker) == true) }
            let counter = Atomic(0)
            try await onQueue.waitFor(timeout: .seconds(20)) { _ in counter.add(1, ordering: .relaxed).newValue == 2 }
            #expect(onQueue.events == [true, true])
        }
    }

    @Test("context modifiers reach the download, and application keys ride along")
    func contextModifiers() async throws {
        try await ManagerHarness.run { harness in
            harness.servePNG("/mod.png")
            enum Tenant: LoadContextKey { typealias Value = String }
            var context = LoadContext()
            context[Tenant.self] = "blue"
            #expect(context[Tenant.self] == "blue")
            context.downloadRequestModifier = DownloadRequestModifier { request in
                var request = request
                request.headers.append(("X-Tenant", "blue"))
                return request
            }
            let manager = try harness.makeManager()
            _ = try await manager.image(for: harness.origin.url("/mod.png"), context: context)
            #expect(harness.origin.requests(to: "/mod.png").first?.header("X-Tenant") == "blue")
            var refusing = LoadContext()
            refusing.downloadResponseModifier = DownloadResponseModifier { _ in nil }
            await #expect(throws: WebImageError(.rejected)) {
                try await manager.image(for: harness.origin.url("/mod.png"), options: .fromLoaderOnly, context: refusing)
            }
        }
    }

    @Test("application values reach the loader and the coder; loads with values set apart never share a load")
    func customValuesReachPlugins() async throws {
        enum Tenant: LoadContextKey { typealias Value = String }
        /// Serves the harness PNG and remembers the tenant each load asked for.
        final class TenantLoader: ImageLoader {
            let seen = Locked<[String?]>([])
            let png: Data
            init(png: Data) { self.png = png }
            func canLoad(_ url: URL) -> Bool { true }
            func loadData(_ url: URL, options: LoadRequestOptions, events: @escaping @Sendable (LoadEvent) -> Void)
                async throws(WebImageError) -> LoadedData
            {
                seen.withLock { $0.append(options.values[Tenant.self]) }
                return LoadedData(data: png, url: url)
            }
        }
        /// Decodes PNG and tints nothing, but records the tenant it decoded for.
        final class TenantCoder: ImageCoder {
            let seen = Locked<[String?]>([])
            func canDecode(_ format: ImageFormat) -> Bool { format == .png }
            func decode(_ data: Data, options: DecodeOptions) throws(WebImageError) -> Image {
                seen.withLock { $0.append(options.values[Tenant.self]) }
                return try PNGCoder().decode(data, options: options)
            }
            func canEncode(to format: ImageFormat) -> Bool { false }
            func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws(WebImageError) -> Data { Data() }
        }
        try await ManagerHarness.run { harness in
            let loader = TenantLoader(png: harness.png)
            let coder = TenantCoder()
            let manager = ImageManager(cache: ImageCache(disk: nil), loader: loader, coders: CodersManager(coders: [coder]))
            var blue = LoadContext()
            blue[Tenant.self] = "blue"
            var green = LoadContext()
            green[Tenant.self] = "green"
            let url = URL(string: "custom://images/a.png")!
            _ = try await manager.image(for: url, options: .fromLoaderOnly, context: blue)
            _ = try await manager.image(for: url, options: .fromLoaderOnly, context: green)
            _ = try await manager.image(for: url, options: .fromLoaderOnly)
            #expect(loader.seen.withLock { $0 } == ["blue", "green", nil])
            #expect(coder.seen.withLock { $0 } == ["blue", "green", nil])
            #expect(blue.customValues == blue.customValues && blue.customValues != green.customValues)
            let copy = blue
            #expect(copy.customValues == blue.customValues, "an unchanged copy shares loads with its original")
        }
    }

    @Test(".scaleDownLargeImages keeps the bitmap under 60 MB")
    func scaleDown() async throws {
        try await ManagerHarness.run { harness in
            let width = 4200
            let height = 4000
            let big = Image(
                pixels: PixelBuffer(width: width, height: height, premultipliedRGBA: [UInt8](repeating: 200, count: width * height * 4)))
            let jpeg = try CodersManager.shared.encode(big, as: .jpeg, options: EncodeOptions(quality: 0.5))
            harness.origin.route("/big.jpg", .ok([UInt8](jpeg), contentType: "image/jpeg"))
            let manager = try harness.makeManager()
            let scaled = try await manager.image(for: harness.origin.url("/big.jpg"), options: .scaleDownLargeImages)
            let image = try #require(scaled.image)
            #expect(image.memoryCost <= CodersManager.scaleDownLimitBytes)
            #expect(image.pixelWidth == 2100 && image.pixelHeight == 2000)
        }
    }

    @Test("imageScaleDownLimitBytes scales down to its own limit, with or without .scaleDownLargeImages")
    func scaleDownLimit() async throws {
        try await ManagerHarness.run { harness in
            harness.origin.route("/photo.jpg", .ok([UInt8](harness.jpeg), contentType: "image/jpeg"))
            let manager = try harness.makeManager()
            var context = LoadContext()
            context.imageScaleDownLimitBytes = 64 * 48 * 4 / 4  // a quarter of the 64x48 bitmap
            let scaled = try await manager.image(for: harness.origin.url("/photo.jpg"), options: .fromLoaderOnly, context: context)
            #expect(scaled.image?.pixelWidth == 32 && scaled.image?.pixelHeight == 24)
            context.imageScaleDownLimitBytes = 64 * 48 * 4 / 16 - 1  // just under a sixteenth: an eighth each way
            let smaller = try await manager.image(for: harness.origin.url("/photo.jpg"), options: .fromLoaderOnly, context: context)
            #expect(smaller.image?.pixelWidth == 8 && smaller.image?.pixelHeight == 6)
            let whole = try CodersManager.shared.decode(harness.jpeg, options: DecodeOptions(scaleDownLimitBytes: 64 * 48 * 4))
            #expect(whole.pixelWidth == 64, "an image within the limit is left as it is")
        }
    }
}

/// A transformer built from a spec, for tests that need a second, different transformer.
struct TransformSpecTransformer: ImageTransformer {
    let inner: any ImageTransformer
    init(_ spec: String) { inner = try! TransformSpec.parse(spec) }
    var transformerKey: String { inner.transformerKey }
    func transform(_ image: Image, forKey key: String) -> Image? { inner.transform(image, forKey: key) }
}

@Suite("ImageManager context keys")
struct ImageManagerContextTests {
    @Test("scale: the context's factor, else the @2x / @3x key rule; both make their own variant")
    func scale() async throws {
        try await ManagerHarness.run { harness in
            harness.servePNG("/icon@2x.png")
            harness.servePNG("/plain.png")
            let manager = try harness.makeManager()
            #expect(try await manager.image(for: harness.origin.url("/icon@2x.png")).image?.scale == 2)
            var context = LoadContext()
            context.imageScaleFactor = 3
            let tripled = try await manager.image(for: harness.origin.url("/plain.png"), context: context)
            #expect(tripled.image?.scale == 3)
            #expect(manager.variantKey(for: harness.origin.url("/plain.png"), context: context).stringValue.hasSuffix("{scale:3.0}"))
            #expect(try await manager.image(for: harness.origin.url("/plain.png")).image?.scale == 1)
        }
    }

    @Test("a thumbnail without the aspect ratio is exactly the size; no original store keeps the original bytes off disk")
    func thumbnailStretchAndOriginalStore() async throws {
        try await ManagerHarness.run { harness in
            harness.servePNG("/s.png")
            let url = harness.origin.url("/s.png")
            let cache = try harness.makeCache()
            let manager = try harness.makeManager(cache: cache)
            var context = LoadContext()
            context.imageThumbnailPixelSize = (width: 20, height: 20)
            context.imagePreserveAspectRatio = false
            context.originalStoreCacheType = ImageCacheType.none
            let stretched = try await manager.image(for: url, options: .waitStoreCache, context: context)
            #expect(stretched.image?.pixelWidth == 20 && stretched.image?.pixelHeight == 20)
            #expect(!cache.diskImageExists(for: CacheKey(url.absoluteString)))
            #expect(cache.diskImageExists(for: manager.variantKey(for: url, context: context)))
        }
    }

    @Test(
        "high priority overtakes queued loads, and so does a queued load a high-priority caller joins; the prefetcher calls back on its queue"
    )
    func priorityAndPrefetcherQueue() async throws {
        try await ManagerHarness.run { harness in
            for name in ["first", "queued", "urgent", "joined"] { harness.servePNG("/\(name).png") }
            let downloader = ImageDownloader(configuration: ImageDownloaderConfiguration(maximumConcurrentDownloads: 1, retryPolicy: .none))
            let loader = AnnouncingLoader(downloader)
            let manager = ImageManager(cache: try harness.makeCache(), loader: loader, coders: harness.coders)
            downloader.isSuspended = true
            let order = EventLog<String>()
            for (name, options) in [
                ("first", LoadOptions.lowPriority), ("queued", []), ("urgent", .highPriority), ("joined", .lowPriority),
            ] {
                manager.loadImage(with: harness.origin.url("/\(name).png"), options: options) { _ in order.record(name) }
            }
            let queued = Locked(0)
            try await loader.started.waitFor { _ in
                queued.withLock {
                    $0 += 1
                    return $0 == 4
                }
            }
            // A load announces itself before it reaches the downloader's queue: all four must be
            // queued before the queue starts, or a normal one could start while the urgent one is
            // still on its way (seen under AddressSanitizer on a loaded machine).
            try await waitUntil("four transfers queued") { downloader.currentDownloadCount == 4 }
            // Joins the low-priority load of /joined.png: the shared load's task is escalated,
            // and the downloader moves the transfer up (issue 39: priority through the task).
            manager.loadImage(with: harness.origin.url("/joined.png"), options: .highPriority) { _ in order.record("joined again") }
            downloader.isSuspended = false
            let finished = Locked(0)
            try await order.waitFor { _ in
                finished.withLock {
                    $0 += 1
                    return $0 == 5
                }
            }
            // The two high-priority transfers reach the queue in either order (each load runs in a
            // task of its own); both go before the normal and the low one.
            let paths = harness.origin.requests.map(\.path)
            #expect(Set(paths.prefix(2)) == ["/urgent.png", "/joined.png"] && paths.dropFirst(2) == ["/queued.png", "/first.png"])
            try await downloader.shutdown()

            let queue = DispatchQueue(label: "prefetch-callbacks")
            let marker = DispatchSpecificKey<Bool>()
            queue.setSpecific(key: marker, value: true)
            let prefetcher = ImagePrefetcher(manager: manager)
            prefetcher.callbackQueue = .dispatch(queue)
            let onQueue = EventLog<Bool>()
            prefetcher.prefetch(
                [harness.origin.url("/first.png")], completed: { _, _ in onQueue.record(DispatchQueue.getSpecific(key: marker) == true) })
            #expect(try await onQueue.waitFor { _ in true })
        }
    }
}

/// Passes loads to another loader and records each one it starts.
final class AnnouncingLoader: ImageLoader {
    let inner: any ImageLoader
    let started = EventLog<URL>()

    init(_ inner: any ImageLoader) {
        self.inner = inner
    }

    func canLoad(_ url: URL) -> Bool { inner.canLoad(url) }

    func loadData(_ url: URL, options: LoadRequestOptions, events: @escaping @Sendable (LoadEvent) -> Void)
        async throws(WebImageError) -> LoadedData
    {
        started.record(url)
        return try await inner.loadData(url, options: options, events: events)
    }
}

/// An application's own cache: a dictionary of images and one of bytes with their metadata,
/// implementing the memory and metadata facets of `ImageCaching`.
private final class DictionaryCache: ImageCaching {
    let images = Locked<[CacheKey: Image]>([:])
    let entries = Locked<[CacheKey: (data: Data, metadata: DiskCacheMetadata)]>([:])

    func query(_ key: CacheKey, options: ImageCacheOptions, cacheType: ImageCacheType) async -> ImageCacheResult {
        if cacheType.includesMemory, let image = images.withLock({ $0[key] }) {
            return ImageCacheResult(image: image, data: nil, cacheType: .memory)
        }
        guard cacheType.includesDisk, let entry = entries.withLock({ $0[key] }) else { return .miss }
        let image = options.contains(.avoidDecodeImage) ? nil : try? CodersManager.shared.decode(entry.data)
        return ImageCacheResult(image: image, data: entry.data, cacheType: .disk)
    }
    func store(_ image: Image?, data: Data?, for key: CacheKey, cacheType: ImageCacheType) async throws(WebImageError) {
        try await store(image, data: data, for: key, cacheType: cacheType, metadata: DiskCacheMetadata())
    }
    func store(_ image: Image?, data: Data?, for key: CacheKey, cacheType: ImageCacheType, metadata: DiskCacheMetadata)
        async throws(WebImageError)
    {
        if cacheType.includesMemory, let image { storeInMemory(image, for: key) }
        if cacheType.includesDisk, let data { entries.withLock { $0[key] = (data, metadata) } }
    }
    func remove(_ key: CacheKey, cacheType: ImageCacheType) async {
        if cacheType.includesMemory { images.withLock { _ = $0.removeValue(forKey: key) } }
        if cacheType.includesDisk { entries.withLock { _ = $0.removeValue(forKey: key) } }
    }
    func contains(_ key: CacheKey, cacheType: ImageCacheType) async -> ImageCacheType {
        await query(key, options: .avoidDecodeImage, cacheType: cacheType).cacheType
    }
    func clear(_ cacheType: ImageCacheType) async {
        if cacheType.includesMemory { images.withLock { $0 = [:] } }
        if cacheType.includesDisk { entries.withLock { $0 = [:] } }
    }
    /// How many times the memory facet was looked at.
    let memoryProbes = Locked(0)
    func memoryImage(for key: CacheKey) -> Image? {
        memoryProbes.withLock { $0 += 1 }
        return images.withLock { $0[key] }
    }
    func storeInMemory(_ image: Image, for key: CacheKey) { images.withLock { $0[key] = image } }
    func metadata(for key: CacheKey) -> DiskCacheMetadata? { entries.withLock { $0[key]?.metadata } }
}

@Suite("ImageManager with other caches")
struct ManagerCacheFacetTests {
    @Test("issue 61: a load looks in the memory tier once, whether the caller or the load itself looks")
    func memoryProbedOnce() async throws {
        try await ManagerHarness.run { harness in
            harness.servePNG("/probe.png")
            let url = harness.origin.url("/probe.png")
            let cache = DictionaryCache()
            let manager = ImageManager(cache: cache, loader: harness.downloader, coders: harness.coders)
            func probes(_ load: () async throws -> Void) async rethrows -> Int {
                let before = cache.memoryProbes.withLock { $0 }
                try await load()
                return cache.memoryProbes.withLock { $0 } - before
            }
            // Results not stored: storing reads the memory facet back (whether it took the
            // image), which is not a look for one.
            var unstored = LoadContext()
            unstored.storeCacheType = ImageCacheType.none
            let miss = try await probes { _ = try await manager.image(for: url, context: unstored) }
            #expect(miss == 1, "a miss: the caller's look")
            let deliveries = Deliveries()
            let callbackMiss = try await probes {
                _ = try #require(manager.loadImage(with: url, context: unstored, completed: deliveries.completion))
                _ = try await deliveries.result().get()
            }
            #expect(callbackMiss == 1, "the callback API's miss")
            // Options the caller's look does not cover: the load looks once itself.
            let refresh = try await probes { _ = try await manager.image(for: url, options: .refreshCached, context: unstored) }
            #expect(refresh == 1)
            cache.storeInMemory(try #require(try await manager.image(for: url, context: unstored).image), for: CacheKey(url.absoluteString))
            let hit = try await probes { _ = try await manager.image(for: url) }
            #expect(hit == 1, "a hit")
        }
    }

    @Test("a disk hit is decoded by the manager: its coders and its limits, not the cache's; a corrupt entry is removed and loaded again")
    func managerDecodesDiskHits() async throws {
        try await ManagerHarness.run { harness in
            harness.servePNG("/disk.png")
            let url = harness.origin.url("/disk.png")
            let key = CacheKey(url.absoluteString)
            // The cache's own coders are the shared ones; the manager's count their decodes.
            let cache = ImageCache(memory: MemoryCache(), disk: try DiskCache(directory: harness.directory))
            try await cache.store(nil, data: harness.png, for: key, cacheType: .disk)
            let manager = ImageManager(cache: cache, loader: harness.downloader, coders: harness.coders)
            let before = harness.coder.decodes.load(ordering: .relaxed)
            let hit = try await manager.image(for: url)
            #expect(hit.cacheType == .disk && hit.image != nil && hit.data == harness.png)
            #expect(harness.coder.decodes.load(ordering: .relaxed) == before + 1, "decoded by the manager's coders")
            #expect(cache.memoryImage(for: key) != nil, "and put in the memory tier")

            await cache.clear(.memory)
            let strict = ImageManager(
                cache: cache, loader: harness.downloader, coders: harness.coders,
                configuration: ImageManagerConfiguration(decodeLimits: DecodeLimits(maximumPixelCount: 16)))
            await #expect(throws: WebImageError(.tooLarge)) { try await strict.image(for: url) }
            #expect(cache.storedData(for: key) == harness.png, "an entry over one manager's limits stays")

            try await cache.store(nil, data: harness.png.prefix(40), for: key, cacheType: .disk)
            let reloaded = try await manager.image(for: url, options: .waitStoreCache)
            #expect(reloaded.cacheType == .none && harness.origin.requestCount("/disk.png") == 1)
            #expect(cache.storedData(for: key) == harness.png, "the corrupt entry was replaced by the download")
            #expect(harness.origin.requestCount("/disk.png") == 1)
        }
    }

    @Test(".queryDiskDataSync and .queryMemoryData work through a CacheChain: the bytes come from its byte tier, on the caller's thread")
    func synchronousOptionsThroughAChain() async throws {
        try await ManagerHarness.run { harness in
            let url = harness.origin.url("/chained.png")
            let key = CacheKey(url.absoluteString)
            let member = try harness.makeCache()
            try await member.store(nil, data: harness.png, for: key, cacheType: .disk)
            let manager = ImageManager(cache: CacheChain(caches: [member]), loader: harness.downloader, coders: harness.coders)

            let fromDisk = Locked<ImageResult?>(nil)
            let diskOperation = manager.loadImage(with: url, options: .queryDiskDataSync) { result in
                fromDisk.withLock { $0 = try? result.get() }
            }
            #expect(diskOperation == nil && fromDisk.withLock { $0?.cacheType } == .disk, "answered before loadImage returned")
            #expect(member.memoryImage(for: key) != nil)

            let withData = Locked<ImageResult?>(nil)
            manager.loadImage(with: url, options: [.queryMemoryData, .queryMemoryDataSync]) { result in
                withData.withLock { $0 = try? result.get() }
            }
            #expect(withData.withLock { $0?.cacheType } == .memory && withData.withLock { $0?.data } == harness.png)
            #expect(harness.origin.requestCount("/chained.png") == 0)
        }
    }

    @Test(
        "through a CacheChain and an application's cache: memory hits answer inline, .refreshCached revalidates with the stored ETag, and bytes from query are decoded by the manager"
    )
    func facets() async throws {
        try await ManagerHarness.run { harness in
            let chain = CacheChain(caches: [try harness.makeCache()])
            for (index, cache) in [chain as any ImageCaching, DictionaryCache()].enumerated() {
                let path = "/facet-\(index).png"
                harness.servePNG(path, etag: "\"v\(index)\"")
                let url = harness.origin.url(path)
                let manager = ImageManager(cache: cache, loader: harness.downloader, coders: harness.coders)
                _ = try await manager.image(for: url, options: .waitStoreCache)
                #expect(cache.metadata(for: CacheKey(url.absoluteString))?.etag == "\"v\(index)\"")

                let inline = Locked<ImageResult?>(nil)
                let operation = manager.loadImage(with: url) { result in inline.withLock { $0 = try? result.get() } }
                #expect(operation == nil && inline.withLock { $0?.cacheType } == .memory, "answered before loadImage returned")

                let deliveries = Deliveries()
                _ = try #require(manager.loadImage(with: url, options: .refreshCached, completed: deliveries.completion))
                #expect(try await deliveries.result().get().cacheType == .memory)
                let requests = try await harness.origin.waitForRequests(2, to: path)
                #expect(requests.last?.header("If-None-Match") == "\"v\(index)\"", "a conditional request, answered 304")

                // Memory emptied: the cache's bytes, asked for through `query`, are decoded by the
                // manager, with their metadata, and the origin is not asked again.
                await cache.clear(.memory)
                let fromBytes = try await manager.image(for: url)
                #expect(fromBytes.cacheType == .disk && fromBytes.image != nil && fromBytes.metadata?.etag == "\"v\(index)\"")
                #expect(harness.origin.requestCount(path) == 2)
                #expect(cache.memoryImage(for: CacheKey(url.absoluteString)) != nil, "the decoded image is put in memory")
            }
        }
    }
}
