public import Foundation

/// Chooses the bytes written to the disk cache for a loaded image (SDWebImage's
/// `SDWebImageCacheSerializer`), for example to keep a WebP download as PNG. It receives the
/// image, the bytes as loaded (nil for a transformed image) and the URL; returning nil stores
/// nothing on disk.
public struct CacheSerializer: Sendable {
    /// The serializer.
    public let serialize: @Sendable (_ image: Image, _ data: Data?, _ url: URL) -> Data?

    /// Wraps a closure.
    public init(_ serialize: @escaping @Sendable (_ image: Image, _ data: Data?, _ url: URL) -> Data?) {
        self.serialize = serialize
    }
}
