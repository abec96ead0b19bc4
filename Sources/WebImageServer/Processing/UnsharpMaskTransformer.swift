import WebImage

/// imgproxy Pro's unsharp masking (`ush:MODE:WEIGHT:DIVIDER`, `IMGPROXY_UNSHARP_MASKING_*`): its
/// documentation says the weight is how much the neighbouring pixels affect a pixel (greater is
/// sharper) and the divider the strength (smaller is sharper), defaults 1 and 24. Pro's source is
/// not public; this is the 3x3 mask those words describe: each colour channel moves away from its
/// eight neighbours' mean by `weight x (8 x centre - neighbours) / divider`, so the defaults
/// add a third of the difference between a pixel and its neighbours' mean. Edge pixels repeat
/// the nearest row or column; alpha is kept.
struct UnsharpMaskTransformer: ImageTransformer {
    var weight: Double
    var divider: Double

    var transformerKey: String { "unsharpMask" }

    func transform(_ image: Image, forKey key: String) -> Image? {
        // Works on 8-bit pixels: a 16-bit image is reduced first.
        let image = image.reducedToEightBits()
        var result = image
        result.frames = image.frames.map { ImageFrame(pixels: sharpened($0.pixels), duration: $0.duration) }
        return result
    }

    private func sharpened(_ pixels: PixelBuffer) -> PixelBuffer {
        let (width, height) = (pixels.width, pixels.height)
        guard width > 0, height > 0 else { return pixels }
        let factor = weight / divider
        var output = pixels.bytes
        pixels.bytes.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { output in
                for y in 0..<height {
                    let above = max(0, y - 1) * width
                    let row = y * width
                    let below = min(height - 1, y + 1) * width
                    for x in 0..<width {
                        let left = max(0, x - 1)
                        let right = min(width - 1, x + 1)
                        let centre = (row + x) * 4
                        for channel in 0..<3 {
                            func across(_ line: Int) -> Int {
                                Int(source[(line + left) * 4 + channel]) + Int(source[(line + x) * 4 + channel])
                                    + Int(source[(line + right) * 4 + channel])
                            }
                            let sum = across(above) + across(row) + across(below)
                            let value = Double(source[centre + channel])
                            let neighbours = Double(sum) - value
                            output[centre + channel] = UInt8(min(255, max(0, (value + factor * (8 * value - neighbours)).rounded())))
                        }
                    }
                }
            }
        }
        return PixelBuffer(width: width, height: height, straightRGBA: output)
    }
}
