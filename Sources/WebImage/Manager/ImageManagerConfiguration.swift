/// The policies of an ``ImageManager``, apart from the parts it is built on (cache, loader,
/// coders), with SDWebImage's defaults: nothing transformed, URLs as cache keys, the loaded
/// bytes stored as they came, default decode limits.
public struct ImageManagerConfiguration: Sendable {
    /// Applied to every image unless a load's context names its own. Default none.
    public var transformer: (any ImageTransformer)?
    /// Makes cache keys from URLs unless a load's context names its own. Default: the URL's
    /// absolute string.
    public var cacheKeyFilter: CacheKeyFilter?
    /// Chooses the bytes stored on disk unless a load's context names its own. Default: the
    /// loaded bytes (a transformed image's own encoding).
    public var cacheSerializer: CacheSerializer?
    /// Rewrites every load's options and context. Default none.
    public var optionsProcessor: OptionsProcessor?
    /// Decides whether to download and whether to block failed URLs. Default: download, and
    /// block URLs that failed for good (`WebImageError.isTransient` false).
    public var delegate: (any ImageManagerDelegate)?
    /// Bounds checked before decoding. Default `DecodeLimits.init()`.
    public var decodeLimits: DecodeLimits
    /// Whether the origin's caching headers decide when a cached image is revalidated. Default
    /// ``CacheFreshnessPolicy/useCachedAsIs``.
    public var cacheFreshness: CacheFreshnessPolicy
    /// How many URLs the failed list (``ImageManager/failedURLs``) holds at most. Default 10,000.
    public var failedURLCapacity = 10_000
    /// How long a URL that failed for good stays blocked. Default one hour.
    public var failedURLLifetime: Duration = .seconds(3600)

    /// Creates a configuration; every default is SDWebImage's.
    public init(
        transformer: (any ImageTransformer)? = nil,
        cacheKeyFilter: CacheKeyFilter? = nil,
        cacheSerializer: CacheSerializer? = nil,
        optionsProcessor: OptionsProcessor? = nil,
        delegate: (any ImageManagerDelegate)? = nil,
        decodeLimits: DecodeLimits = DecodeLimits(),
        cacheFreshness: CacheFreshnessPolicy = .useCachedAsIs
    ) {
        self.transformer = transformer
        self.cacheKeyFilter = cacheKeyFilter
        self.cacheSerializer = cacheSerializer
        self.optionsProcessor = optionsProcessor
        self.delegate = delegate
        self.decodeLimits = decodeLimits
        self.cacheFreshness = cacheFreshness
    }
}
