public import Foundation

/// What an image cache does, so that several can stand behind one (``CacheChain``) and an
/// application can bring its own (SDWebImage's `SDImageCache` protocol).
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
}
