/// A requested thumbnail: the pixel size to decode at, and how to fit the image into it.
///
/// Coders decode straight to it where the format allows (JPEG by eighths); a cache key
/// (`ThumbnailSize`) names it as one of the parts of a variant.
public struct ThumbnailSize: Hashable, Sendable {
    /// Target width in pixels.
    public var width: Int
    /// Target height in pixels.
    public var height: Int
    /// Keep the aspect ratio (fit inside the size), or stretch to it.
    public var preservesAspectRatio: Bool

    /// Creates a thumbnail request.
    public init(width: Int, height: Int, preservesAspectRatio: Bool = true) {
        self.width = width
        self.height = height
        self.preservesAspectRatio = preservesAspectRatio
    }
}
