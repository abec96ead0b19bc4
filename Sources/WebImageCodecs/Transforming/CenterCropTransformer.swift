/// Cuts the largest centred rectangle of an aspect ratio out of the image: `16:9` makes a wide
/// image, `1:1` a square.
///
/// Key: `centercrop:W:H`, for example `centercrop:16:9`.
public struct CenterCropTransformer: ImageTransformer, Hashable {
    /// The ratio's width term.
    public var aspectWidth: Int
    /// The ratio's height term.
    public var aspectHeight: Int

    /// Creates a centre crop; terms below 1 are raised to 1.
    public init(aspectWidth: Int, aspectHeight: Int) {
        self.aspectWidth = max(1, aspectWidth)
        self.aspectHeight = max(1, aspectHeight)
    }

    public var transformerKey: String { "centercrop:\(aspectWidth):\(aspectHeight)" }

    public func transform(_ image: Image, forKey key: String) -> Image? {
        image.mappingFrames(keepingHighBitDepth: true, crop)
    }

    func crop(_ pixels: PixelBuffer) -> PixelBuffer {
        // Compare pixels.width / pixels.height with aspectWidth / aspectHeight without division.
        let imageWider = pixels.width * aspectHeight > pixels.height * aspectWidth
        let width = imageWider ? max(1, Int((Double(pixels.height * aspectWidth) / Double(aspectHeight)).rounded())) : pixels.width
        let height = imageWider ? pixels.height : max(1, Int((Double(pixels.width * aspectHeight) / Double(aspectWidth)).rounded()))
        guard width != pixels.width || height != pixels.height else { return pixels }
        return pixels.cropped(x: (pixels.width - width) / 2, y: (pixels.height - height) / 2, width: width, height: height)
    }
}
