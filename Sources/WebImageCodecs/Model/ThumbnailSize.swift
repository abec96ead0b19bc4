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
    /// Resample the rest of the way to the size after the decoder's own scaling (the default).
    /// Without it, a decoder that scales by steps (JPEG's DCT eighths, PNG's whole factors)
    /// returns its smallest step that still reaches the size, for a caller that resizes or
    /// cuts the image itself and would otherwise resample twice: the image proxy does.
    public var resamples: Bool

    /// Creates a thumbnail request.
    public init(width: Int, height: Int, preservesAspectRatio: Bool = true, resamples: Bool = true) {
        self.width = width
        self.height = height
        self.preservesAspectRatio = preservesAspectRatio
        self.resamples = resamples
    }

    /// The least size a decoder that scales by its own steps (JPEG's DCT, PNG's whole-factor
    /// reduction) must reach for this thumbnail of a `width` x `height` image: the fitted size,
    /// rounded up, when the aspect ratio is kept; the box itself otherwise. The rest of the way
    /// is resampled.
    func neededSize(forWidth width: Int, height: Int) -> (width: Int, height: Int) {
        guard preservesAspectRatio, self.width > 0, self.height > 0 else { return (self.width, self.height) }
        let ratio = min(Double(self.width) / Double(width), Double(self.height) / Double(height))
        return (Int((Double(width) * ratio).rounded(.up)), Int((Double(height) * ratio).rounded(.up)))
    }
}
