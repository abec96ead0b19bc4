/// Pixelates: the image becomes square blocks, each the average colour of the pixels it covers
/// (imgproxy's `pixelate`). Blocks start at the top-left corner; those at the right and bottom
/// edges are cut to the image.
///
/// Key: `pixelate:SIZE`, for example `pixelate:8`.
public struct PixelatingTransformer: ImageTransformer, Hashable {
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
                    var sum = SIMD4<UInt32>()
                    for row in rows {
                        for column in columns {
                            let offset = (row * width + column) * 4
                            sum &+= SIMD4(
                                UInt32(output[offset]), UInt32(output[offset + 1]), UInt32(output[offset + 2]), UInt32(output[offset + 3]))
                        }
                    }
                    let count = UInt32(rows.count * columns.count)
                    let average = SIMD4<UInt8>(truncatingIfNeeded: (sum &+ count / 2) / count)
                    for row in rows {
                        for column in columns {
                            let offset = (row * width + column) * 4
                            for channel in 0..<4 { output[offset + channel] = average[channel] }
                        }
                    }
                }
            }
        }
        return PixelBuffer(width: width, height: height, premultipliedRGBA: output)
    }
}
