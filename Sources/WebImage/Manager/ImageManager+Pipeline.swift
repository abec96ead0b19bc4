import Foundation

/// The shared part of a load, run once per ``SharedLoadKey`` in its own task.
extension ImageManager {
    func perform(_ request: Request, load: SharedLoad) async {
        let outcome: Result<ImageResult, WebImageError>?
        do throws(WebImageError) {
            outcome = try await run(request, load: load).map { .success($0) }
        } catch {
            outcome = .failure(error)
        }
        if case .success = outcome, request.options.contains(.retryFailed) { failedURLs.remove(request.url) }
        finish(load, with: .finished(outcome))
    }

    /// Cache, then original bytes, then the loader. Nil when a revalidation found the cached
    /// image current.
    private func run(_ request: Request, load: SharedLoad) async throws(WebImageError) -> ImageResult? {
        let options = request.options
        var cached: ImageResult?
        /// A cached image too stale to use before the origin confirms it.
        var isStale = false
        if !options.contains(.fromLoaderOnly), request.queryCacheType != .none, let result = try await cachedImage(request) {
            if options.contains(.refreshCached) {
                cached = result
                load.broadcast(.image(result, isPartial: false))
            } else {
                switch freshness(of: request) {
                case .fresh: return result
                case .staleWhileRevalidate:
                    revalidateInBackground(request)
                    return result
                case .stale:
                    cached = result
                    isStale = true
                }
            }
        }
        if cached == nil, let fromOriginal = try await fromOriginalBytes(request) {
            return fromOriginal
        }
        try Task.checkCancellation(as: WebImageError.self)
        guard !options.contains(.fromCacheOnly) else {
            throw WebImageError(.cacheMiss, "\(request.key) is not cached and the load is .fromCacheOnly")
        }
        guard delegate?.imageManager(self, shouldDownloadImageFor: request.url) ?? true else {
            throw WebImageError(.rejected, "the manager's delegate declined to download \(request.url.absoluteString)", refusal: .delegate)
        }
        var loaded: LoadedData
        var image: Image?
        do throws(WebImageError) {
            let validators = cached == nil ? nil : storedValidators(request)
            loaded = try await loadData(request, from: request.url, load: load, validators: validators)
            image = try await decodeAndTransform(loaded.data, request)
        } catch  where error.code == .notModified && cached != nil {
            await renewFreshness(request, after: error)
            guard isStale, var cached else { return nil }
            if cached.metadata != nil { cached.metadata = request.cache.metadata(for: request.key) ?? cached.metadata }
            return cached
        } catch {
            guard error.code != .cancelled, let recovered = await fromAlternativeSources(request, load: load) else {
                blockIfNeeded(request.url, error: error)
                throw error
            }
            (loaded, image) = recovered
        }
        let result = ImageResult(
            image: image, data: loaded.data, cacheType: .none, url: request.url, finalURL: loaded.url, metadata: metadata(of: loaded))
        // Outside the block above: a store that fails is the cache's trouble, never a reason to
        // put the URL on the failed list.
        try await store(result, loaded: loaded, request: request)
        return result
    }

    /// The cached image: the memory facet at once (unless the caller looked there already:
    /// ``Request/memoryProbed``), else the cache's bytes (asked for with
    /// `.avoidDecodeImage`) decoded here, so that a disk hit is decoded like a download: in the
    /// manager's pool, by the load's coders, within the manager's limits. A cache that answers
    /// with an image anyway is taken at its word. Bytes that are corrupt are removed and count
    /// as a miss; bytes over the manager's limits fail the load as a download of them would,
    /// and stay (another manager's limits may allow them).
    private func cachedImage(_ request: Request) async throws(WebImageError) -> ImageResult? {
        if request.queryCacheType.includesMemory, !request.memoryProbed, let image = request.cache.memoryImage(for: request.key) {
            return ImageResult(image: image, data: nil, cacheType: .memory, url: request.url)
        }
        do throws(WebImageError) {
            if let cache = request.cache as? ImageCache { return try await fromDiskInOneJob(request, disk: cache.disk) }
            return try await fromQuery(request)
        } catch  where error.code == .decodeFailed || error.code == .notAnImage {
            // Bytes that no longer decode are never served again; the load goes on to the loader.
            logger.notice("removing an undecodable cache entry", metadata: ["key": "\(request.key)", "error": "\(error)"])
            await request.cache.remove(request.key, cacheType: .disk)
            return nil
        }
    }

    /// A hit of any cache but an ``ImageCache``: its bytes, asked for through `query`, decoded in
    /// the pool (an image the cache returns anyway is used as it is).
    private func fromQuery(_ request: Request) async throws(WebImageError) -> ImageResult? {
        let options = request.options
        let hit = await request.cache.query(
            request.key, options: options.cacheOptions.union(.avoidDecodeImage), cacheType: request.queryCacheType)
        guard hit.isHit else { return nil }
        let metadata = hit.data == nil ? nil : request.cache.metadata(for: request.key)
        if hit.image != nil || options.contains(.avoidDecodeImage) {
            return ImageResult(image: hit.image, data: hit.data, cacheType: hit.cacheType, url: request.url, metadata: metadata)
        }
        guard let data = hit.data else { return nil }
        let image = try await decodeCached(data, request)
        return ImageResult(image: image, data: data, cacheType: hit.cacheType, url: request.url, metadata: metadata)
    }

    /// A disk hit of an ``ImageCache`` in one job of the pool: its query for bytes is exactly
    /// its byte facet (the disk's bytes and metadata), so the bytes are read, and decoded, where
    /// the decode runs anyway, with no trip through the cache's own query. Any other cache (a
    /// chain that promotes hits between its caches, an application's) is asked through `query`.
    /// A cache without a disk tier (`disk` nil), or whose disk index has no entry for the key, is
    /// a miss here without a trip to the pool.
    private func fromDiskInOneJob(_ request: Request, disk: DiskCache?) async throws(WebImageError) -> ImageResult? {
        guard request.queryCacheType.includesDisk, let disk, !disk.isCertainMiss(request.key.stringValue) else { return nil }
        let decodes = !request.options.contains(.avoidDecodeImage)
        let read = try await workPool.run(priority: request.workPriority) { () throws(WebImageError) in
            guard let data = request.cache.storedData(for: request.key) else { return nil as (Data, DiskCacheMetadata?, Image?)? }
            return (data, request.cache.metadata(for: request.key), decodes ? try self.decodeCachedNow(data, request) : nil)
        }
        guard let (data, metadata, image) = read else { return nil }
        return ImageResult(image: image, data: data, cacheType: .disk, url: request.url, metadata: metadata)
    }

    /// Decodes a cache entry's bytes in the pool.
    private func decodeCached(_ data: Data, _ request: Request) async throws(WebImageError) -> Image {
        try await workPool.run(priority: request.workPriority) { () throws(WebImageError) in try self.decodeCachedNow(data, request) }
    }

    /// Decodes a cache entry's bytes on this thread (they are the variant's own: no transform)
    /// and puts the image in the cache's memory tier.
    func decodeCachedNow(_ data: Data, _ request: Request) throws(WebImageError) -> Image {
        let image = try decodeVariantAware(data, request, coders: request.coders, options: decodeOptions(for: request))
        request.cache.storeInMemory(image, for: request.key)
        return image
    }

    /// For a variant (thumbnail or transform): the original's bytes from the cache, decoded at
    /// the variant's size and transformed, saving a download. Nil when they are not cached.
    private func fromOriginalBytes(_ request: Request) async throws(WebImageError) -> ImageResult? {
        let options = request.options
        guard request.key.isVariant, !options.contains(.fromLoaderOnly), !options.contains(.refreshCached),
            request.originalQueryCacheType != .none
        else { return nil }
        switch freshness(of: request) {
        case .fresh: break
        case .staleWhileRevalidate: revalidateInBackground(request)
        case .stale: return nil
        }
        let original = await request.cache.query(
            request.key.originalKey, options: [.avoidDecodeImage], cacheType: request.originalQueryCacheType)
        guard let data = original.data else { return nil }
        let image = try await decodeAndTransform(data, request)
        let result = ImageResult(image: image, data: data, cacheType: original.cacheType, url: request.url)
        try await storeVariant(result, data: data, request: request, metadata: DiskCacheMetadata())
        return result
    }

    /// The validators stored with the original bytes, for a conditional request.
    private func storedValidators(_ request: Request) -> HTTPValidators? {
        guard let metadata = request.cache.metadata(for: request.key.originalKey) else { return nil }
        return HTTPValidators(etag: metadata.etag, lastModified: metadata.lastModified)
    }

    // MARK: - Freshness

    /// Where the cached entry stands by the origin's caching headers: always fresh unless the
    /// manager respects them and the entry (the original's, else the variant's) has a stored
    /// freshness.
    func freshness(of request: Request) -> HTTPFreshness.State {
        let policy = configuration.cacheFreshness
        guard policy.respectsCacheControl,
            let freshness = (request.cache.metadata(for: request.key.originalKey) ?? request.cache.metadata(for: request.key))?.freshness
        else { return .fresh }
        return freshness.state(at: policy.now())
    }

    /// Renews the stored freshness from a 304's headers (RFC 9111 4.3.4), keeping the bytes.
    private func renewFreshness(_ request: Request, after error: WebImageError) async {
        guard let head = (error.underlyingError as? NotModifiedResponse)?.head else { return }
        let received = configuration.cacheFreshness.now()
        for key in Set([request.key.originalKey, request.key]) {
            guard var metadata = request.cache.metadata(for: key) else { continue }
            let headers = (head.header("Cache-Control"), head.header("Expires"), head.header("Date"), head.header("Age"))
            metadata.freshness =
                metadata.freshness?.renewed(
                    cacheControl: headers.0, expires: headers.1, date: headers.2, age: headers.3, lastModified: metadata.lastModified,
                    receivedAt: received)
                ?? HTTPFreshness(
                    cacheControl: headers.0, expires: headers.1, date: headers.2, age: headers.3, lastModified: metadata.lastModified,
                    receivedAt: received)
            await request.cache.updateMetadata(metadata, for: key)
        }
    }

    /// Revalidates a stale entry behind the load that used it (`stale-while-revalidate`): a
    /// conditional request at low priority; a 304 renews the freshness, a 200 replaces the
    /// entry. One at a time per original key.
    func revalidateInBackground(_ request: Request) {
        let key = request.key.originalKey
        revalidations.withLock { running in
            guard running[key] == nil else { return }
            // Started under the lock: its own removal, at its end, waits until it is recorded.
            running[key] = Task.detached(priority: .utility) { [self] in
                await revalidate(request)
                revalidations.withLock { _ = $0.removeValue(forKey: key) }
            }
        }
    }

    private func revalidate(_ request: Request) async {
        var options = request.requestOptions
        options.validators = storedValidators(request)
        options.priority = .low
        do throws(WebImageError) {
            let loaded = try await request.loader.loadData(request.url, options: options)
            let image = try await decodeAndTransform(loaded.data, request)
            let result = ImageResult(image: image, data: loaded.data, cacheType: .none, url: request.url, finalURL: loaded.url)
            try await store(result, loaded: loaded, request: request)
        } catch  where error.code == .notModified {
            await renewFreshness(request, after: error)
        } catch {
            logger.notice("a background revalidation failed", metadata: ["key": "\(request.key)", "error": "\(error)"])
        }
    }

    private func blockIfNeeded(_ url: URL, error: WebImageError) {
        guard error.code != .cancelled else { return }
        let block = delegate?.imageManager(self, shouldBlockFailedURL: url, error: error) ?? !error.isTransient
        if block { failedURLs.insert(url) }
    }

    // MARK: - Loading

    /// The bytes and image from the first of the context's alternative sources that loads and
    /// decodes; nil when there are none or all fail (each failure is logged).
    private func fromAlternativeSources(_ request: Request, load: SharedLoad) async -> (LoadedData, Image?)? {
        for source in request.context.alternativeSources {
            do throws(WebImageError) {
                let loaded = try await loadData(request, from: source, load: load, validators: nil)
                return (loaded, try await decodeAndTransform(loaded.data, request))
            } catch {
                if error.code == .cancelled { return nil }
                logger.notice("an alternative source failed", metadata: ["url": "\(source)", "error": "\(error)"])
            }
        }
        return nil
    }

    /// Loads the bytes from `url` (the request's own, or an alternative source), passing progress
    /// to every caller and partial images to those who asked.
    private func loadData(_ request: Request, from url: URL, load: SharedLoad, validators: HTTPValidators?) async throws(WebImageError)
        -> LoadedData
    {
        var requestOptions = request.requestOptions
        requestOptions.priority = load.priority
        requestOptions.validators = validators
        // A revalidation never shows partial images of the new copy over the cached one.
        requestOptions.progressive = validators == nil && load.wantsPartialImages
        let partials = PartialImageDecoder(manager: self, request: request, load: load)
        defer { partials.stop() }
        return try await request.loader.loadData(url, options: requestOptions) { event in
            switch event {
            case .progress(let received, let expected):
                load.broadcast(.progress(received: received, expected: expected))
            case .partialData(let partial):
                partials.offer(partial.data)
            }
        }
    }

    // MARK: - Decoding and transforming

    /// Decodes (unless `.avoidDecodeImage`) and transforms (animated images only with
    /// `.transformAnimatedImage`), each in the bounded work pool.
    func decodeAndTransform(_ data: Data, _ request: Request) async throws(WebImageError) -> Image? {
        let options = request.options
        guard !options.contains(.avoidDecodeImage) else { return nil }
        let decodeOptions = decodeOptions(for: request)
        let coders = request.coders
        let priority = request.workPriority
        let image = try await workPool.run(priority: priority) { () throws(WebImageError) in
            try self.decodeVariantAware(data, request, coders: coders, options: decodeOptions)
        }
        reportWarnings(of: image, request)
        guard let transformer = request.transformer, !image.isAnimated || options.contains(.transformAnimatedImage) else { return image }
        try Task.checkCancellation(as: WebImageError.self)
        let key = request.key.original
        return try await workPool.run(priority: priority) { () throws(WebImageError) in
            guard let transformed = transformer.transform(image, forKey: key) else {
                throw WebImageError(.transformFailed, "\(transformer.transformerKey) gave no image for \(key)")
            }
            return transformed
        }
    }

    /// Decodes; a variant (a thumbnail or a transform) is made from the upright image and is
    /// itself upright (``ExifOrientation/up``), so that the copy in memory, the one the cache
    /// encodes to disk (which keeps no orientation) and the one a later process decodes are the
    /// same image. The thumbnail's box applies to the upright image. Originals keep their bytes
    /// and their orientation flag.
    func decodeVariantAware(_ data: Data, _ request: Request, coders: CodersManager, options: DecodeOptions)
        throws(WebImageError) -> Image
    {
        guard request.key.isVariant else { return try coders.decode(data, options: options) }
        var options = options
        if let box = options.thumbnail, (try? ImageHeader(data: data))?.orientation.swapsDimensions == true {
            options.thumbnail = ThumbnailSize(width: box.height, height: box.width, preservesAspectRatio: box.preservesAspectRatio)
        }
        let image = try coders.decode(data, options: options)
        return OrientationTransformer().transform(image, forKey: "") ?? image
    }

    func decodeOptions(for request: Request, partial: Bool = false) -> DecodeOptions {
        let options = request.options
        return DecodeOptions(
            limits: decodeLimits, thumbnail: request.key.thumbnail, firstFrameOnly: options.contains(.decodeFirstFrameOnly) || partial,
            scale: request.context.imageScaleFactor ?? Image.scale(forKey: request.key.original),
            scaleDownLargeImages: options.contains(.scaleDownLargeImages) && !options.contains(.progressiveLoad),
            scaleDownLimitBytes: request.context.imageScaleDownLimitBytes,
            acceptsTruncatedImages: partial || options.contains(.acceptTruncatedImages), values: request.context.customValues
        )
    }

    /// A decode that worked around damage is logged at debug level and counted
    /// (`MetricName.decodeWarnings`); it is a success all the same.
    private func reportWarnings(of image: Image, _ request: Request) {
        guard !image.warnings.isEmpty else { return }
        (image.isPartial ? partialDecodes : decodesWithWarnings).increment()
        logger.debug(
            "decoded with warnings",
            metadata: ["url": "\(request.url)", "partial": "\(image.isPartial)", "warnings": "\(image.warnings.joined(separator: "; "))"])
    }

    // MARK: - Storing

    /// Stores a loaded result: the image (and bytes) under the variant key, and for a variant
    /// the original bytes under the original key. `.waitStoreCache` waits for it; otherwise the
    /// memory tier is filled now and the disk written in the background. `no-store` stores nothing.
    func store(_ result: ImageResult, loaded: LoadedData, request: Request) async throws(WebImageError) {
        // Part of an image is never kept as if it were the image: the next load asks again.
        guard loaded.isStorable, result.image?.isPartial != true else { return }
        let metadata = result.metadata ?? metadata(of: loaded)
        if request.key.isVariant, request.originalStoreCacheType != .none {
            let original = request.key.originalKey
            try await write(request) { () async throws(WebImageError) in
                try await request.cache.store(
                    nil, data: loaded.data, for: original, cacheType: request.originalStoreCacheType, metadata: metadata)
            }
        }
        try await storeVariant(result, data: loaded.data, request: request, metadata: metadata)
    }

    /// What a load's response said about its bytes, as the cache stores it beside them.
    func metadata(of loaded: LoadedData) -> DiskCacheMetadata {
        // Only an HTTP response has caching headers; bytes from a file or a data: URL have none.
        let freshness = loaded.statusCode.map { _ in
            HTTPFreshness(
                cacheControl: loaded.cacheControl, expires: loaded.expires, date: loaded.date, age: loaded.age,
                lastModified: loaded.lastModified, receivedAt: configuration.cacheFreshness.now())
        }
        var metadata = DiskCacheMetadata(
            contentType: loaded.contentType, etag: loaded.etag, lastModified: loaded.lastModified, freshness: freshness)
        metadata.retainedHeaders = loaded.retainedHeaders
        return metadata
    }

    /// The memory tier is filled at once, so the image is there when the caller hears of it;
    /// the disk gets the bytes as loaded, the serializer's bytes, or (for a transformed image)
    /// the cache's own encoding.
    private func storeVariant(_ result: ImageResult, data: Data, request: Request, metadata: DiskCacheMetadata) async throws(WebImageError)
    {
        guard request.storeCacheType != .none else { return }
        let image = result.image
        let transformed =
            request.transformer != nil && image.map { !$0.isAnimated || request.options.contains(.transformAnimatedImage) } == true
        // A thumbnail is stored as the thumbnail (the cache's encoding of it), as SDWebImage
        // stores it, not as the original's bytes again under a second key: the original has its
        // own entry, and a crawl of thumbnails would otherwise keep every original twice.
        let reshaped = transformed || (request.key.thumbnail != nil && image != nil)
        var bytes: Data? = reshaped ? nil : data
        var serializerDeclined = false
        if let serializer = request.serializer, let image {
            bytes = serializer.serialize(image, bytes, request.url)
            serializerDeclined = bytes == nil
        }
        let storedBytes = serializerDeclined ? nil : bytes
        // The memory tier now, so the image is there when the caller hears of it; then the store
        // proper, which a cache with no synchronous memory tier needs for memory as well.
        var memoryHandled = false
        if let image, request.storeCacheType.includesMemory {
            request.cache.storeInMemory(image, for: request.key)
            memoryHandled = request.cache.memoryImage(for: request.key) != nil
        }
        // A cache whose memory facet took the image needs only the disk tier from the store.
        let memoryTier: ImageCacheType = request.storeCacheType.includesMemory && !memoryHandled ? .memory : .none
        let diskTier = !serializerDeclined && request.storeCacheType.includesDisk
        let tiers: ImageCacheType = diskTier ? (memoryTier == .memory ? .all : .disk) : memoryTier
        guard tiers != .none, storedBytes != nil || image != nil else { return }
        try await write(request) { () async throws(WebImageError) in
            try await request.cache.store(
                tiers.includesMemory || storedBytes == nil ? image : nil, data: storedBytes, for: request.key, cacheType: tiers,
                metadata: metadata)
        }
    }

    /// Runs a cache write now (`.waitStoreCache`, whose caller gets the write's error) or in the
    /// background. Either way a failed write is logged and counted (`MetricName.cacheStoreFailures`).
    private func write(_ request: Request, _ body: @escaping @Sendable () async throws(WebImageError) -> Void) async throws(WebImageError) {
        guard request.options.contains(.waitStoreCache) else {
            Task.detached(priority: .utility) { [self] in
                do throws(WebImageError) { try await body() } catch { storeFailed(request, error) }
            }
            return
        }
        do throws(WebImageError) {
            try await body()
        } catch {
            storeFailed(request, error)
            throw error
        }
    }

    private func storeFailed(_ request: Request, _ error: WebImageError) {
        storeFailures.increment()
        logger.warning("a cache store failed", metadata: ["key": "\(request.key)", "error": "\(error)"])
    }
}
