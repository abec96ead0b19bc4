/// How one load behaves: SDWebImage 5's `SDWebImageOptions`, every flag that means something
/// here. `continueInBackground`, `forceTransition`, `matchAnimatedImageClass` and
/// `preloadAllFrames` are absent: Linux has no app life cycle, no view transitions and no image
/// class to match, and frames are always decoded together (their bits stay unused).
public struct LoadOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int

    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Load a URL even when it is on the failed-URL list; a success takes it off the list.
    public static let retryFailed = LoadOptions(rawValue: 1 << 0)
    /// Queue the download behind normal-priority ones.
    public static let lowPriority = LoadOptions(rawValue: 1 << 1)
    /// Deliver partial images while the download runs (never stored in a cache).
    public static let progressiveLoad = LoadOptions(rawValue: 1 << 2)
    /// Deliver the cached image at once, then revalidate it with the origin using the stored
    /// `ETag` / `Last-Modified`, and deliver again only when the origin sends a new image.
    public static let refreshCached = LoadOptions(rawValue: 1 << 3)
    /// Send and store cookies (Foundation's shared cookie storage).
    public static let handleCookies = LoadOptions(rawValue: 1 << 5)
    /// Accept TLS certificates that do not verify (for tests and private networks).
    public static let allowInvalidSSLCertificates = LoadOptions(rawValue: 1 << 6)
    /// Queue the download ahead of the others. Wins over ``lowPriority``.
    public static let highPriority = LoadOptions(rawValue: 1 << 7)
    /// A target shows its placeholder only if the load fails, not while it runs.
    public static let delayPlaceholder = LoadOptions(rawValue: 1 << 8)
    /// Transform animated images too, frame by frame; by default they are left as they are.
    public static let transformAnimatedImage = LoadOptions(rawValue: 1 << 9)
    /// A target does not show the image itself; the completion decides what to do with it.
    public static let avoidAutoSetImage = LoadOptions(rawValue: 1 << 10)
    /// Decode large images at a reduced size, so that the bitmap stays under 60 MB. Ignored with
    /// ``progressiveLoad``; no effect with ``avoidDecodeImage``.
    public static let scaleDownLargeImages = LoadOptions(rawValue: 1 << 11)
    /// On a memory hit, also read the encoded bytes from disk (asynchronously unless
    /// ``queryMemoryDataSync``).
    public static let queryMemoryData = LoadOptions(rawValue: 1 << 12)
    /// With ``queryMemoryData``: read those bytes on the calling thread.
    public static let queryMemoryDataSync = LoadOptions(rawValue: 1 << 13)
    /// After a memory miss, read the disk on the calling thread.
    public static let queryDiskDataSync = LoadOptions(rawValue: 1 << 14)
    /// Never load: a cache miss fails with `WebImageError.Code.cacheMiss`.
    public static let fromCacheOnly = LoadOptions(rawValue: 1 << 15)
    /// Never read the caches; always load (the result is still stored).
    public static let fromLoaderOnly = LoadOptions(rawValue: 1 << 16)
    /// Do not decode: the result carries the bytes and no image.
    public static let avoidDecodeImage = LoadOptions(rawValue: 1 << 18)
    /// Decode only the first frame of an animation.
    public static let decodeFirstFrameOnly = LoadOptions(rawValue: 1 << 19)
    /// Deliver the result only after it is stored in the caches.
    public static let waitStoreCache = LoadOptions(rawValue: 1 << 22)
    /// Show what arrived of an image whose data ends early (`DecodeOptions.acceptsTruncatedImages`):
    /// the result is marked `Image.isPartial`, is never cached, and the URL is not put on the
    /// failed list. Off by default, as in SDWebImage: a file cut short fails the load.
    public static let acceptTruncatedImages = LoadOptions(rawValue: 1 << 23)

    /// Every flag with its SDWebImage name in kebab case (`retry-failed`), for command lines.
    public static let names: [(name: String, option: LoadOptions)] = [
        ("retry-failed", .retryFailed), ("low-priority", .lowPriority), ("progressive-load", .progressiveLoad),
        ("refresh-cached", .refreshCached),
        ("handle-cookies", .handleCookies), ("allow-invalid-ssl-certificates", .allowInvalidSSLCertificates),
        ("high-priority", .highPriority), ("delay-placeholder", .delayPlaceholder),
        ("transform-animated-image", .transformAnimatedImage), ("avoid-auto-set-image", .avoidAutoSetImage),
        ("scale-down-large-images", .scaleDownLargeImages), ("query-memory-data", .queryMemoryData),
        ("query-memory-data-sync", .queryMemoryDataSync), ("query-disk-data-sync", .queryDiskDataSync),
        ("from-cache-only", .fromCacheOnly), ("from-loader-only", .fromLoaderOnly),
        ("avoid-decode-image", .avoidDecodeImage), ("decode-first-frame-only", .decodeFirstFrameOnly),
        ("wait-store-cache", .waitStoreCache), ("accept-truncated-images", .acceptTruncatedImages),
    ]

    /// Parses a comma-separated list of ``names``.
    /// - Throws: `WebImageError.Code.invalidArgument` naming the first unknown name.
    public init(parsing list: String) throws(WebImageError) {
        var options: LoadOptions = []
        for name in list.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) where !name.isEmpty {
            guard let option = Self.names.first(where: { $0.name == name })?.option else {
                throw WebImageError(
                    .invalidArgument, "unknown option \"\(name)\"; known: \(Self.names.map(\.name).joined(separator: ", "))")
            }
            options.insert(option)
        }
        self = options
    }

    /// The cache options a query with these load options uses.
    var cacheOptions: ImageCacheOptions {
        var cache: ImageCacheOptions = []
        if contains(.queryMemoryData) { cache.insert(.queryMemoryData) }
        if contains(.queryMemoryDataSync) { cache.insert(.queryMemoryDataSync) }
        if contains(.queryDiskDataSync) { cache.insert(.queryDiskDataSync) }
        if contains(.scaleDownLargeImages) { cache.insert(.scaleDownLargeImages) }
        if contains(.avoidDecodeImage) { cache.insert(.avoidDecodeImage) }
        if contains(.decodeFirstFrameOnly) { cache.insert(.decodeFirstFrameOnly) }
        return cache
    }

    /// The queue priority these options ask for: high wins over low.
    var priority: LoadRequestOptions.Priority {
        contains(.highPriority) ? .high : contains(.lowPriority) ? .low : .normal
    }
}
