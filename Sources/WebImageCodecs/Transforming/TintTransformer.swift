/// Paints every pixel with a colour, keeping the image's shape (SDWebImage's
/// `SDImageTintTransformer`, source-in): each pixel becomes the colour, with its opacity
/// multiplied by the pixel's. Good for monochrome icons.
///
/// Key: `tint:#rrggbb` or `tint:#rrggbbaa`.
public struct TintTransformer: ImageTransformer, Hashable {
    /// The paint.
    public var color: RGBAColor

    /// Creates a tint.
    public init(color: RGBAColor) {
        self.color = color
    }

    public var transformerKey: String { "tint:\(color.hexString)" }

    public func transform(_ image: Image, forKey key: String) -> Image? {
        let paint = color.premultiplied
        return image.mappingFrames { pixels in
            var output = pixels.bytes
            output.withUnsafeMutableBytes { bytes in
                for offset in stride(from: 0, to: bytes.count, by: 4) {
                    let coverage = Float(bytes[offset + 3]) / 255
                    PremultipliedPixel.store(paint * coverage, to: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + offset)
                }
            }
            return PixelBuffer(width: pixels.width, height: pixels.height, straightRGBA: output)
        }
    }
}
