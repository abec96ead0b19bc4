import WebImage

/// The box `trim` keeps: the part of an image that differs from its background, found as
/// libvips' `vips_find_trim` finds it (which imgproxy's `vips_trim` calls): transparency
/// flattened onto magenta, a 3x3 median per channel (edges repeated), a pixel counting as content
/// when any channel differs from the background by more than the threshold, and the first
/// column or row with content from each side. With `equalHorizontal` (`equalVertical`) the box
/// widens on the side that had less cut so that both sides lose the same, as imgproxy's
/// `vips_trim` does.
struct TrimFinder {
    /// How far a channel may be from the background and still be background, 0...255. imgproxy's
    /// default is 10.
    var threshold: Double
    /// The background; nil takes the top-left pixel's (after flattening), imgproxy's "smart" trim.
    var background: RGBAColor?
    var equalHorizontal = false
    var equalVertical = false

    /// The smallest box holding every pixel that is not fully transparent (a drawn text's ink),
    /// nil when there is none.
    static func inkBox(of pixels: PixelBuffer) -> (x: Int, y: Int, width: Int, height: Int)? {
        var (left, top, right, bottom) = (pixels.width, pixels.height, -1, -1)
        for y in 0..<pixels.height {
            for x in 0..<pixels.width where pixels.bytes[(y * pixels.width + x) * 4 + 3] > 0 {
                (left, right) = (min(left, x), max(right, x))
                (top, bottom) = (min(top, y), max(bottom, y))
            }
        }
        guard right >= 0 else { return nil }
        return (left, top, right - left + 1, bottom - top + 1)
    }

    /// The box to keep in `pixels`, nil when there is nothing to cut or nothing but background
    /// (imgproxy then keeps the image as it is).
    func box(in pixels: PixelBuffer) -> (x: Int, y: Int, width: Int, height: Int)? {
        let width = pixels.width
        let height = pixels.height
        guard width > 0, height > 0 else { return nil }
        let flat = Self.flattenedOnMagenta(pixels)
        let reference = background.map { [$0.red, $0.green, $0.blue] } ?? [flat[0], flat[1], flat[2]]
        var window = [UInt8](repeating: 0, count: 9)
        func isContent(_ x: Int, _ y: Int) -> Bool {
            for channel in 0..<3 {
                var index = 0
                for dy in -1...1 {
                    let row = min(max(y + dy, 0), height - 1) * width
                    for dx in -1...1 {
                        window[index] = flat[(row + min(max(x + dx, 0), width - 1)) * 3 + channel]
                        index += 1
                    }
                }
                window.sort()
                if abs(Double(window[4]) - Double(reference[channel])) > threshold { return true }
            }
            return false
        }
        // From each side inwards: only the margins and the first line of content are examined.
        guard let top = (0..<height).first(where: { y in (0..<width).contains { isContent($0, y) } }) else { return nil }
        let bottom = (top..<height).reversed().first { y in (0..<width).contains { isContent($0, y) } } ?? top
        let left = (0..<width).first { x in (top...bottom).contains { isContent(x, $0) } } ?? 0
        let right = (left..<width).reversed().first { x in (top...bottom).contains { isContent(x, $0) } } ?? left
        var (x, boxWidth) = Self.span(first: left, last: right, size: width, equal: equalHorizontal)
        var (y, boxHeight) = Self.span(first: top, last: bottom, size: height, equal: equalVertical)
        if x == 0, y == 0, boxWidth == width, boxHeight == height { return nil }
        x = min(x, width - 1)
        y = min(y, height - 1)
        boxWidth = min(boxWidth, width - x)
        boxHeight = min(boxHeight, height - y)
        return (x, y, boxWidth, boxHeight)
    }

    /// One axis of the box: from the first to the last index with content, or, made equal, with
    /// the larger margin cut from both sides.
    private static func span(first: Int, last: Int, size: Int, equal: Bool) -> (start: Int, length: Int) {
        var start = first
        var length = last - first + 1
        guard equal else { return (start, length) }
        let after = size - start - length
        if after > start {
            length += after - start
        } else if after < start {
            length += start - after
            start = after
        }
        return (start, length)
    }

    /// Straight RGB of `pixels` over magenta (255, 0, 255), the colour imgproxy flattens onto.
    private static func flattenedOnMagenta(_ pixels: PixelBuffer) -> [UInt8] {
        let bytes = pixels.bytes
        var flat = [UInt8](repeating: 0, count: pixels.width * pixels.height * 3)
        let matte: [UInt32] = [255, 0, 255]
        for pixel in 0..<(pixels.width * pixels.height) {
            let alpha = UInt32(bytes[pixel * 4 + 3])
            for channel in 0..<3 {
                let value = UInt32(bytes[pixel * 4 + channel])
                flat[pixel * 3 + channel] = UInt8((value * alpha + matte[channel] * (255 - alpha) + 127) / 255)
            }
        }
        return flat
    }
}
