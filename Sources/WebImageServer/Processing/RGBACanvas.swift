import WebImage

/// Straight RGBA pixels that pictures are copied onto, row by row, uncropped: the stacked pages
/// of `pages` and the tile sheet of `video_thumbnail_tile`. 8 or 16 bits a sample (pages kept at
/// 16 bits by `preserve_hdr` are stacked at 16).
struct RGBACanvas {
    let width: Int
    let height: Int
    let bitsPerSample: Int
    private var bytes: [UInt8]

    /// A `width` x `height` canvas of `bitsPerSample` (8 or 16) filled with `color` (at 16 bits,
    /// each sample times 257).
    init(width: Int, height: Int, color: RGBAColor = .clear, bitsPerSample: Int = 8) {
        (self.width, self.height, self.bitsPerSample) = (width, height, bitsPerSample)
        let samples = [color.red, color.green, color.blue, color.alpha]
        let pixel = bitsPerSample == 16 ? samples.map { UInt16($0) * 257 }.withUnsafeBytes { [UInt8]($0) } : samples
        let count = width * height * pixel.count
        bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            for index in 0..<count { buffer[index] = pixel[index % pixel.count] }
            initialized = count
        }
    }

    /// Copies `pixels` (of the canvas's depth) with its top-left corner at (`left`, `top`); it
    /// must lie inside the canvas.
    mutating func draw(_ pixels: PixelBuffer, left: Int, top: Int) {
        precondition(pixels.bitsPerSample == bitsPerSample, "a picture of the canvas's depth")
        for row in 0..<pixels.height {
            let from = row * pixels.bytesPerRow
            let to = ((top + row) * width + left) * pixels.bytesPerPixel
            bytes.replaceSubrange(to..<(to + pixels.bytesPerRow), with: pixels.bytes[from..<(from + pixels.bytesPerRow)])
        }
    }

    /// The canvas as a picture.
    var pixels: PixelBuffer {
        PixelBuffer(width: width, height: height, bitsPerSample: bitsPerSample, bytes: bytes)
    }
}
