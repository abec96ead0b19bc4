public import Foundation

/// What an image cache does, so that several can stand behind one (``CacheChain``) and an
/// application can bring its own (SDWebImage's `SDImageCache` protocol).
///
/// Besides the asynchronous query and store, a cache has two facets the manager uses directly,
/// each with a default for a cache that lacks it:
/// - a synchronous memory tier of decoded images (``memoryImage(for:)``,
///   ``storeInMemory(_:for:)``): a hit there is answered on the caller's thread before the load
///   call returns; the default has none;
/// - a byte tier: the bytes read on the caller's thread (``storedData(for:)``, for
///   `.queryDiskDataSync` and `.queryMemoryData`) and the metadata kept beside them
///   (``metadata(for:)``, ``store(_:data:for:cacheType:metadata:)``): the validators that let
///   `.refreshCached` revalidate instead of downloading again; the default has neither.
///
/// The manager decodes every image itself, in its own pool, with its coders and limits: it asks
/// ``query(_:options:cacheType:)`` with ``ImageCacheOptions/avoidDecodeImage`` and decodes the
/// bytes that come back. A cache that returns an image anyway (one that keeps only images) is
/// used as it is.
public protocol ImageCaching: Sendable {
    /// Looks `key` up in the tiers `cacheType` names, memory first.
    func query(_ key: CacheKey, options: ImageCacheOptions, cacheType: ImageCacheType) async -> ImageCacheResult
    /// Stores an image and/or its encoded data in the tiers `cacheType` names.
    func store(_ image: Image?, data: Data?, for key: CacheKey, cacheType: ImageCacheType) async throws(WebImageError)
    /// Removes `key` from the tiers `cacheType` names.
    func remove(_ key: CacheKey, cacheType: ImageCacheType) async
    /// The tier that holds `key`, or ``ImageCacheType/none``.
    func contains(_ key: CacheKey, cacheType: ImageCacheType) async -> ImageCacheType
    /// Empties the tiers `cacheType` names.
    func clear(_ cacheType: ImageCacheType) async

    /// The decoded image the memory tier holds for `key`, without waiting: a lock and a lookup.
    func memoryImage(for key: CacheKey) -> Image?
    /// Puts `image` in the memory tier at once.
    func storeInMemory(_ image: Image, for key: CacheKey)
    /// The bytes the byte tier holds for `key`, read on the caller's thread; nil when absent.
    func storedData(for key: CacheKey) -> Data?
    /// What the byte tier keeps beside `key`'s bytes (validators, content type, expiry).
    func metadata(for key: CacheKey) -> DiskCacheMetadata?
    /// ``store(_:data:for:cacheType:)`` with the metadata to keep beside the bytes.
    func store(_ image: Image?, data: Data?, for key: CacheKey, cacheType: ImageCacheType, metadata: DiskCacheMetadata)
        async throws(WebImageError)
    /// Replaces the metadata kept beside `key`'s bytes, keeping the bytes (a revalidation that
    /// found them current refreshes their freshness).
    func updateMetadata(_ metadata: DiskCacheMetadata, for key: CacheKey) async
}

extension ImageCaching {
    /// No memory tier: nothing is answered synchronously.
    public func memoryImage(for key: CacheKey) -> Image? { nil }
    /// No memory tier: nothing is kept.
    public func storeInMemory(_ image: Image, for key: CacheKey) {}
    /// No byte tier: nothing is read on the caller's thread.
    public func storedData(for key: CacheKey) -> Data? { nil }
    /// No metadata is kept.
    public func metadata(for key: CacheKey) -> DiskCacheMetadata? { nil }
    /// No metadata is kept: nothing to update.
    public func updateMetadata(_ metadata: DiskCacheMetadata, for key: CacheKey) async {}
    /// Stores without the metadata.
    public func store(_ image: Image?, data: Data?, for key: CacheKey, cacheType: ImageCacheType, metadata: DiskCacheMetadata)
        async throws(WebImageError)
    {
        try await store(image, data: data, for: key, cacheType: cacheType)
    }
}
