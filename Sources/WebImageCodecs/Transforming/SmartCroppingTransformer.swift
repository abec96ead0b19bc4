/// Crops to a size, keeping the most detailed part of the image (imgproxy's `gravity:sm`).
///
/// Detail is edge energy: for every pixel, the absolute luminance difference to its right and
/// lower neighbours, summed per column and per row. Along each axis with room to move, the
/// window is placed where its columns (or rows) hold the most energy; ties keep the window
/// nearest the centre. An edge measure finds faces, text and subjects against sky, wall or
/// studio backdrops, which are flat; it costs one pass over the pixels and two sliding sums.
///
/// Key: `smartcrop:WxH`, for example `smartcrop:300x200`.
package struct SmartCroppingTransformer: ImageTransformer, Hashable {
    /// The width of the result (at most the image's).
    public var width: Int
    /// The height of the result.
    public var height: Int

    /// Creates a smart crop; sizes below 1 are raised to 1.
    public init(width: Int, height: Int) {
        self.width = max(1, width)
        self.height = max(1, height)
    }

    public var transformerKey: String { "smartcrop:\(width)x\(height)" }

    public func transform(_ image: Image, forKey key: String) -> Image? {
        // Every frame is cut at the window chosen on the first, so an animation does not jump.
        let origin = Self.origin(of: image.pixels, width: min(width, image.pixelWidth), height: min(height, image.pixelHeight))
        return image.mappingFrames { pixels in
            pixels.cropped(
                x: origin.x, y: origin.y, width: min(width, pixels.width - origin.x), height: min(height, pixels.height - origin.y))
        }
    }

    /// The top-left corner of the `width` x `height` window with the most edge energy.
    static func origin(of pixels: PixelBuffer, width: Int, height: Int) -> (x: Int, y: Int) {
        guard width < pixels.width || height < pixels.height else { return (0, 0) }
        var columns = [Int](repeating: 0, count: pixels.width)
        var rows = [Int](repeating: 0, count: pixels.height)
        pixels.bytes.withUnsafeBufferPointer { bytes in
            func luminance(_ offset: Int) -> Int {
                // Rec. 601 weights in integers, times alpha, so transparent areas count as dark and flat.
                (Int(bytes[offset]) * 299 + Int(bytes[offset + 1]) * 587 + Int(bytes[offset + 2]) * 114) * Int(bytes[offset + 3]) / 255_000
            }
            let stride = pixels.bytesPerRow
            for y in 0..<pixels.height {
                for x in 0..<pixels.width {
                    let offset = y * stride + x * 4
                    let here = luminance(offset)
                    var energy = 0
                    if x + 1 < pixels.width { energy += abs(here - luminance(offset + 4)) }
                    if y + 1 < pixels.height { energy += abs(here - luminance(offset + stride)) }
                    columns[x] += energy
                    rows[y] += energy
                }
            }
        }
        return (bestStart(of: columns, window: width), bestStart(of: rows, window: height))
    }

    /// The start of the `window`-long run of `values` with the largest sum, nearest the centre
    /// among equals.
    static func bestStart(of values: [Int], window: Int) -> Int {
        let slack = values.count - window
        guard slack > 0 else { return 0 }
        var sum = values[0..<window].reduce(0, +)
        var best = (start: 0, sum: sum, distance: abs(0 - slack / 2))
        for start in 1...slack {
            sum += values[start + window - 1] - values[start - 1]
            let distance = abs(start - slack / 2)
            if sum > best.sum || (sum == best.sum && distance < best.distance) { best = (start, sum, distance) }
        }
        return best.start
    }
}
