/// Cuts out a rectangle in pixels (SDWebImage's `SDImageCroppingTransformer`). The rectangle is
/// clipped to the image; a rectangle entirely outside gives no image.
///
/// Key: `crop:WxH+X+Y`, for example `crop:300x200+10+20`.
public struct CroppingTransformer: ImageTransformer, Hashable {
    /// Left edge.
    public var x: Int
    /// Top edge.
    public var y: Int
    /// Width.
    public var width: Int
    /// Height.
    public var height: Int

    /// Creates a crop.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var transformerKey: String { "crop:\(width)x\(height)+\(x)+\(y)" }

    public func transform(_ image: Image, forKey key: String) -> Image? {
        image.mappingFrames(keepingHighBitDepth: true) { pixels in
            let left = max(x, 0)
            let top = max(y, 0)
            let right = min(x + width, pixels.width)
            let bottom = min(y + height, pixels.height)
            guard right > left, bottom > top else { return nil }
            return pixels.cropped(x: left, y: top, width: right - left, height: bottom - top)
        }
    }
}
