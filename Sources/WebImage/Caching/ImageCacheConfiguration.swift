/// Policies of an ``ImageCache``.
public struct ImageCacheConfiguration: Sendable {
    /// Put images decoded from disk into the memory cache. Default true.
    public var shouldCacheImagesInMemory: Bool
    /// The JPEG quality used when an image with no data and no alpha is written to disk.
    /// Default 1, as SDWebImage.
    public var diskEncodingQuality: Double
    /// Limits for decoding what the disk holds.
    public var decodeLimits: DecodeLimits

    /// Creates a configuration.
    public init(shouldCacheImagesInMemory: Bool = true, diskEncodingQuality: Double = 1, decodeLimits: DecodeLimits = DecodeLimits()) {
        self.shouldCacheImagesInMemory = shouldCacheImagesInMemory
        self.diskEncodingQuality = diskEncodingQuality
        self.decodeLimits = decodeLimits
    }
}
