/// A Gaussian blur (SDWebImage's `SDImageBlurTransformer`). The radius is the Gaussian's
/// standard deviation in pixels, as in Pillow's `GaussianBlur`; it is computed as three
/// extended box blurs, so any radius costs the same. Edges repeat the border pixels.
///
/// Key: `blur:R`, for example `blur:4` or `blur:2.5`.
public struct BlurTransformer: ImageTransformer, Hashable {
    /// The standard deviation in pixels; 0 leaves the image as it is.
    public var radius: Double

    /// Creates a blur; negative radii count as 0.
    public init(radius: Double) {
        self.radius = max(0, radius)
    }

    public var transformerKey: String { "blur:\(TransformSpec.format(radius))" }

    public func transform(_ image: Image, forKey key: String) -> Image? {
        image.mappingFrames(keepingHighBitDepth: true) { BoxBlur.blur($0, sigma: radius) }
    }
}
