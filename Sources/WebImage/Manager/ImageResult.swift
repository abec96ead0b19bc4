public import Foundation

/// What a load delivers.
public struct ImageResult: Sendable {
    /// The image; nil only when `.avoidDecodeImage` asked for the bytes alone.
    public var image: Image?
    /// The encoded bytes, when the load had them at hand: always for a network or disk load,
    /// on a memory hit only with `.queryMemoryData`. Nil for a partial image.
    public var data: Data?
    /// Where the image came from: ``ImageCacheType/none`` for a load from the loader.
    public var cacheType: ImageCacheType
    /// The URL asked for.
    public var url: URL
    /// False for a partial image of a progressive load; more will follow.
    public var isFinished: Bool
    /// The URL the loader took the bytes from, after redirects (`LoadedData.url`); nil for an
    /// image from the cache, whose entry does not record it.
    public var finalURL: URL?
    /// What the origin said about the bytes (content type, validators, freshness), as stored
    /// beside them: set for a load from the loader and for a disk hit of a cache that keeps
    /// metadata; nil for a memory hit, whose image has no bytes at hand.
    public var metadata: DiskCacheMetadata?

    /// Creates a result.
    public init(
        image: Image?, data: Data?, cacheType: ImageCacheType, url: URL, isFinished: Bool = true, finalURL: URL? = nil,
        metadata: DiskCacheMetadata? = nil
    ) {
        self.finalURL = finalURL
        self.metadata = metadata
        self.image = image
        self.data = data
        self.cacheType = cacheType
        self.url = url
        self.isFinished = isFinished
    }
}
