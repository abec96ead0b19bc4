/// Flattens transparency onto a colour: each pixel is composited over the background, so the
/// result is opaque when the background is (imgproxy's `background`, and what saving a
/// translucent image as JPEG needs).
///
/// Key: `background:COLOR`, for example `background:#ffffff`.
package struct BackgroundTransformer: ImageTransformer, Hashable {
    /// The colour behind the image.
    public var color: RGBAColor

    /// Creates a background.
    public init(color: RGBAColor) {
        self.color = color
    }

    public var transformerKey: String { "background:\(color.hexString)" }

    public func transform(_ image: Image, forKey key: String) -> Image? {
        guard image.hasAlpha else { return image }
        let backdrop = color.premultiplied
        var result = image.mappingFrames { pixels in
            var output = pixels.bytes
            output.withUnsafeMutableBytes { bytes in
                for offset in stride(from: 0, to: bytes.count, by: 4) {
                    guard bytes[offset + 3] != 255 else { continue }
                    let pixel = PremultipliedPixel.load(bytes.baseAddress! + offset)
                    // Source over, premultiplied: out = source + backdrop × (1 − source alpha).
                    let over = pixel + backdrop * (1 - pixel[3] / 255)
                    PremultipliedPixel.store(over, to: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + offset)
                }
            }
            return PixelBuffer(width: pixels.width, height: pixels.height, straightRGBA: output)
        }
        if color.alpha == 255 { result?.hasAlpha = false }
        return result
    }
}
