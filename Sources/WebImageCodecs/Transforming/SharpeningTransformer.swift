/// Sharpens with an unsharp mask: each pixel moves away from a Gaussian blur of itself,
/// `pixel + amount × (pixel − blurred)`, so edges gain contrast and flat areas stay as they are
/// (what libvips' `sharpen`, Pillow's `UnsharpMask` and imgproxy's `sharpen` do). The blur is the
/// library's ``BlurTransformer`` (three extended box blurs), so any sigma costs the same.
///
/// Key: `sharpen:SIGMA[:AMOUNT]`, for example `sharpen:1` or `sharpen:1.5:0.8`.
package struct SharpeningTransformer: ImageTransformer, Hashable {
    /// The blur's standard deviation in pixels: the width of the edges that gain contrast. 0
    /// leaves the image as it is.
    public var sigma: Double
    /// How far each pixel moves away from the blur: 1 doubles the local contrast. Default 1.
    public var amount: Double

    /// Creates a sharpen; negative values count as 0.
    public init(sigma: Double, amount: Double = 1) {
        self.sigma = max(0, sigma)
        self.amount = max(0, amount)
    }

    public var transformerKey: String {
        amount == 1 ? "sharpen:\(TransformSpec.format(sigma))" : "sharpen:\(TransformSpec.format(sigma)):\(TransformSpec.format(amount))"
    }

    public func transform(_ image: Image, forKey key: String) -> Image? {
        guard sigma > 0, amount > 0 else { return image }
        let weight = Float(amount)
        return image.mappingFrames(keepingHighBitDepth: true) { pixels in
            let blurred = BoxBlur.blur(pixels, sigma: sigma).bytes
            var output = pixels.bytes
            output.withUnsafeMutableBytes { output in
                blurred.withUnsafeBytes { blurred in
                    if pixels.isHighBitDepth {
                        Self.sharpen(output.bindMemory(to: UInt16.self), blurred.bindMemory(to: UInt16.self), weight: weight)
                    } else {
                        Self.sharpen(output.bindMemory(to: UInt8.self), blurred.bindMemory(to: UInt8.self), weight: weight)
                    }
                }
            }
            return PixelBuffer(width: pixels.width, height: pixels.height, bitsPerSample: pixels.bitsPerSample, bytes: output)
        }
    }

    /// `output` less `weight` times its difference from `blurred`, in samples of 8 or 16 bits.
    private static func sharpen<Sample: FixedWidthInteger & UnsignedInteger>(
        _ output: UnsafeMutableBufferPointer<Sample>, _ blurred: UnsafeBufferPointer<Sample>, weight: Float
    ) {
        let maximum = Float(Sample.max)
        for pixel in stride(from: 0, to: output.count, by: 4) {
            let alpha = Float(output[pixel + 3])
            guard alpha > 0 else { continue }
            // Premultiplied, the blur's colour weighted by its own alpha; alpha itself is kept.
            let blurredAlpha = Float(blurred[pixel + 3])
            for channel in pixel..<pixel + 3 {
                let value = Float(output[channel]) * alpha
                let sharpened = value + weight * (value - Float(blurred[channel]) * blurredAlpha)
                output[channel] = Sample((min(maximum * alpha, max(0, sharpened)) / alpha).rounded())
            }
        }
    }
}
