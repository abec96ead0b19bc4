public import Foundation

/// What a load needs beyond its options: SDWebImage 5's `SDWebImageContext`, with a typed
/// property per key. A value here wins over the manager's default of the same kind.
///
/// SDWebImage's `animatedImageClass` is absent: there is one image type, `Image`.
/// Application keys ride along through ``subscript(_:)``, for custom loaders and coders.
public struct LoadContext: Sendable {
    /// The key under which a target keeps this load; default the target's type name.
    public var setImageOperationKey: String?
    /// The manager a target uses instead of ``ImageManager/shared``.
    public var customManager: ImageManager?
    /// The cache to use instead of the manager's.
    public var imageCache: (any ImageCaching)?
    /// The loader to use instead of the manager's.
    public var imageLoader: (any ImageLoader)?
    /// The coders to use instead of the manager's.
    public var imageCoders: CodersManager?
    /// Transforms the loaded image; wins over the manager's transformer.
    public var imageTransformer: (any ImageTransformer)?
    /// The scale to give the image; default from the `@2x` / `@3x` key rule.
    public var imageScaleFactor: Double?
    /// With ``imageThumbnailPixelSize``: keep the aspect ratio (default true).
    public var imagePreserveAspectRatio: Bool?
    /// Decode at this pixel size (through the codec's own scaling where there is one).
    public var imageThumbnailPixelSize: (width: Int, height: Int)?
    /// Decode an image whose RGBA bitmap would pass this many bytes at a size that fits it, by
    /// halvings, with or without ``LoadOptions/scaleDownLargeImages`` (which uses 60 MB). As in
    /// SDWebImage, the cache key does not change: the scaled image is what the memory tier keeps
    /// for the URL.
    public var imageScaleDownLimitBytes: Int?
    /// Which caches to query; default all.
    public var queryCacheType: ImageCacheType?
    /// Which caches to store the result in; default all.
    public var storeCacheType: ImageCacheType?
    /// For a transformed or thumbnail load: which caches to query for the original bytes before
    /// loading them; default disk.
    public var originalQueryCacheType: ImageCacheType?
    /// For a transformed or thumbnail load: where to store the original bytes; default disk.
    public var originalStoreCacheType: ImageCacheType?
    /// Makes the cache key from the URL; wins over the manager's filter.
    public var cacheKeyFilter: CacheKeyFilter?
    /// Chooses the bytes stored on disk; wins over the manager's serializer.
    public var cacheSerializer: CacheSerializer?
    /// Changes or cancels the request.
    public var downloadRequestModifier: DownloadRequestModifier?
    /// Changes or rejects the response.
    public var downloadResponseModifier: DownloadResponseModifier?
    /// Turns downloaded bytes into image bytes.
    public var downloadDecryptor: DownloadDecryptor?
    /// Where callbacks run; default ``CallbackQueue/inline``.
    public var callbackQueue: CallbackQueue?
    /// URLs tried in order when the load's own URL fails (Kingfisher's `alternativeSources`): a
    /// mirror, a lower-resolution copy. The image is cached under the load's own key, and
    /// ``ImageResult/finalURL`` says where it came from; when every one fails, the load fails
    /// with the first URL's error. Default none.
    public var alternativeSources: [URL] = []

    /// The application's own values (``subscript(_:)``), which reach the options processor,
    /// the loader (`LoadRequestOptions.values`) and the coders (`DecodeOptions.values`).
    public var customValues = CustomValues()

    /// An empty context: every default applies.
    public init() {}

    /// An application's own value, keyed by a type.
    public subscript<Key: LoadContextKey>(_ key: Key.Type) -> Key.Value? {
        get { customValues[key] }
        set { customValues[key] = newValue }
    }

    /// The thumbnail request these keys describe.
    var thumbnail: ThumbnailSize? {
        guard let size = imageThumbnailPixelSize, size.width > 0, size.height > 0 else { return nil }
        return ThumbnailSize(width: size.width, height: size.height, preservesAspectRatio: imagePreserveAspectRatio ?? true)
    }
}
