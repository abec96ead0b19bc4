/// Pixelates: the image becomes square blocks, each the average colour of the pixels it covers
/// (imgproxy's `pixelate`). Blocks start at the top-left corner; those at the right and bottom
/// edges are cut to the image.
///
/// Key: `pixelate:SIZE`, for example `pixelate:8`.
package struct PixelatingTransformer: ImageTransformer, Hashable {
    /// The side of one block in pixels; 1 leaves the image as it is.
    public var blockSize: Int

    /// Creates a pixelation; sizes below 1 count as 1.
    public init(blockSize: Int) {
        self.blockSize = max(1, blockSize)
    }

    public var transformerKey: String { "pixelate:\(blockSize)" }

    public func transform(_ image: Image, forKey key: String) -> Image? {
        guard blockSize > 1 else { return image }
        return image.mappingFrames(pixelate)
    }

    func pixelate(_ pixels: PixelBuffer) -> PixelBuffer {
        let width = pixels.width
        let height = pixels.height
        var output = pixels.bytes
        output.withUnsafeMutableBufferPointer { output in
            for top in stride(from: 0, to: height, by: blockSize) {
                let rows = top..<min(top + blockSize, height)
                for left in stride(from: 0, to: width, by: blockSize) {
                    let columns = left..<min(left + blockSize, width)
                    // Colour weighted by alpha (premultiplied), so transparent pixels add none.
                    var sum = SIMD4<UInt64>()
                    for row in rows {
                        for column in columns {
                            let offset = (row * width + column) * 4
                            let alpha = UInt64(output[offset + 3])
                            sum &+= SIMD4(
                                UInt64(output[offset]) * alpha, UInt64(output[offset + 1]) * alpha, UInt64(output[offset + 2]) * alpha,
                                alpha)
                        }
                    }
                    let average = Self.average(sum, count: UInt64(rows.count * columns.count))
                    for row in rows {
                        for column in columns {
                            let offset = (row * width + column) * 4
                            for channel in 0..<4 { output[offset + channel] = average[channel] }
                        }
                    }
                }
            }
        }
        return PixelBuffer(width: width, height: height, straightRGBA: output)
    }

    /// The straight pixel of alpha-weighted sums over `count` pixels: colour divided by the
    /// alpha sum, alpha by the count, both rounded.
    static func average(_ sum: SIMD4<UInt64>, count: UInt64) -> SIMD4<UInt8> {
        let alphas = sum[3]
        guard alphas > 0 else { return SIMD4() }
        let alpha = UInt8((alphas + count / 2) / count)
        guard alpha > 0 else { return SIMD4() }
        @inline(__always) func colour(_ weighted: UInt64) -> UInt8 { UInt8((weighted + alphas / 2) / alphas) }
        return SIMD4(colour(sum[0]), colour(sum[1]), colour(sum[2]), alpha)
    }
}
