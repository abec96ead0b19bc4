import Foundation

/// What makes two loads the same work: the same variant of the same URL, with the same options
/// that change the result and the same cache, loader and coders. Priority and progressiveness
/// are left out: callers that differ only there share the work (the priority is raised to the
/// highest, partial images go to those who asked).
struct SharedLoadKey: Hashable, Sendable {
    /// Options that change what a load produces or where it is stored.
    static let resultOptions: LoadOptions = [
        .refreshCached, .fromCacheOnly, .fromLoaderOnly, .avoidDecodeImage, .decodeFirstFrameOnly,
        .scaleDownLargeImages, .transformAnimatedImage, .queryMemoryData, .waitStoreCache, .handleCookies,
        .allowInvalidSSLCertificates,
    ]

    let cacheKey: CacheKey
    let url: URL
    let options: LoadOptions
    let cacheTypes: [ImageCacheType?]
    let request: LoadRequestOptions
    let alternativeSources: [URL]
    /// The identities of the cache, loader and coders in use; a unique number instead when one
    /// of them (or a context serializer) cannot be compared, so that such loads never share.
    let components: [ObjectIdentifier]
    let uniqueness: Int
}
