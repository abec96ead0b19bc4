/// Places the image on a canvas of another size, filled with a colour: padding, or extending an
/// image to the size asked for (imgproxy's `padding` and `extend`). The image's top-left corner
/// goes to (x, y) on the canvas; whatever falls outside the canvas is cut off.
///
/// Key: `canvas:WxH+X+Y:COLOR`, for example `canvas:300x200+10+0:#ffffff00`.
package struct CanvasTransformer: ImageTransformer, Hashable {
    /// The canvas width.
    public var width: Int
    /// The canvas height.
    public var height: Int
    /// Where the image's left edge goes on the canvas; negative cuts the image's left side off.
    public var x: Int
    /// Where the image's top edge goes on the canvas.
    public var y: Int
    /// What the canvas shows where the image does not cover it. Default transparent.
    public var color: RGBAColor

    /// Creates a canvas; sizes below 1 are raised to 1.
    public init(width: Int, height: Int, x: Int, y: Int, color: RGBAColor = .clear) {
        self.width = max(1, width)
        self.height = max(1, height)
        self.x = x
        self.y = y
        self.color = color
    }

    public var transformerKey: String { "canvas:\(width)x\(height)+\(x)+\(y):\(color.hexString)" }

    public func transform(_ image: Image, forKey key: String) -> Image? {
        // A colour is placed as code values: at 16 bits only where they mean what they do in
        // sRGB (not PQ or HLG), or where the fill is transparent.
        let keepsDepth = color.alpha == 0 || image.sourceColor?.isHDR != true
        var result = image.mappingFrames(keepingHighBitDepth: keepsDepth, place)
        if color.alpha < 255, width > image.pixelWidth || height > image.pixelHeight { result?.hasAlpha = true }
        return result
    }

    /// The image on the canvas, or nil when the canvas is over ``PixelBuffer/maximumPixelCount``.
    func place(_ pixels: PixelBuffer) -> PixelBuffer? {
        let size = pixels.bytesPerPixel
        guard var output = try? PixelBuffer.zeroedBytes(width: width, height: height, bytesPerPixel: size) else { return nil }
        output.withUnsafeMutableBytes { canvas in
            let eight = SIMD4(color.red, color.green, color.blue, color.alpha)
            if color.alpha != 0, pixels.isHighBitDepth {
                let wide = SIMD4<UInt16>(truncatingIfNeeded: eight) &* 257
                for offset in stride(from: 0, to: canvas.count, by: size) {
                    canvas.storeBytes(of: wide, toByteOffset: offset, as: SIMD4<UInt16>.self)
                }
            } else if color.alpha != 0 {
                for offset in stride(from: 0, to: canvas.count, by: size) {
                    canvas.storeBytes(of: eight, toByteOffset: offset, as: SIMD4<UInt8>.self)
                }
            }
            let columns = max(0, x)..<min(width, x + pixels.width)
            guard !columns.isEmpty else { return }
            pixels.bytes.withUnsafeBytes { source in
                for row in max(0, y)..<min(height, y + pixels.height) {
                    let from = ((row - y) * pixels.width + (columns.lowerBound - x)) * size
                    let to = (row * width + columns.lowerBound) * size
                    canvas.baseAddress!.advanced(by: to).copyMemory(
                        from: source.baseAddress!.advanced(by: from), byteCount: columns.count * size)
                }
            }
        }
        return PixelBuffer(width: width, height: height, bitsPerSample: pixels.bitsPerSample, bytes: output)
    }
}
