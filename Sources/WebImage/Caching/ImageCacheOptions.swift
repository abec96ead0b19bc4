/// Options for an image cache query (SDWebImage's `SDImageCacheOptions`).
public struct ImageCacheOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int

    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// On a memory hit, also read the encoded data from disk (asynchronously, unless
    /// ``queryMemoryDataSync``).
    public static let queryMemoryData = ImageCacheOptions(rawValue: 1 << 0)
    /// Read the data for ``queryMemoryData`` on the caller's thread.
    public static let queryMemoryDataSync = ImageCacheOptions(rawValue: 1 << 1)
    /// After a memory miss, read and decode the disk entry on the caller's thread.
    public static let queryDiskDataSync = ImageCacheOptions(rawValue: 1 << 2)
    /// Decode large images to a bitmap of at most 60 MB (applies when the codecs support it).
    public static let scaleDownLargeImages = ImageCacheOptions(rawValue: 1 << 3)
    /// Return the data only; do not decode it.
    public static let avoidDecodeImage = ImageCacheOptions(rawValue: 1 << 4)
    /// Decode only the first frame of an animation.
    public static let decodeFirstFrameOnly = ImageCacheOptions(rawValue: 1 << 5)
}
