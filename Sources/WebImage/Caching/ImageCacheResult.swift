public import Foundation

/// What an image cache query found.
public struct ImageCacheResult: Sendable {
    /// The decoded image; nil on a miss, or with ``ImageCacheOptions/avoidDecodeImage``.
    public var image: Image?
    /// The encoded bytes, when the disk answered or they were asked for.
    public var data: Data?
    /// The tier that answered; ``ImageCacheType/none`` for a miss.
    public var cacheType: ImageCacheType

    /// Creates a result.
    public init(image: Image?, data: Data?, cacheType: ImageCacheType) {
        self.image = image
        self.data = data
        self.cacheType = cacheType
    }

    /// A miss.
    public static let miss = ImageCacheResult(image: nil, data: nil, cacheType: .none)

    /// Whether anything was found.
    public var isHit: Bool { cacheType != .none }
}
