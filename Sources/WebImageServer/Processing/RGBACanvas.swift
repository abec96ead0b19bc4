import WebImage

/// Straight RGBA pixels that pictures are copied onto, row by row, uncropped: the stacked pages
/// of `pages` and the tile sheet of `video_thumbnail_tile`.
struct RGBACanvas {
    let width: Int
    let height: Int
    private var bytes: [UInt8]

    /// A `width` x `height` canvas filled with `color`.
    init(width: Int, height: Int, color: RGBAColor = .clear) {
        (self.width, self.height) = (width, height)
        let pixel = [color.red, color.green, color.blue, color.alpha]
        bytes = [UInt8](unsafeUninitializedCapacity: width * height * 4) { buffer, initialized in
            for index in 0..<width * height * 4 { buffer[index] = pixel[index & 3] }
            initialized = width * height * 4
        }
    }

    /// Copies `pixels` with its top-left corner at (`left`, `top`); it must lie inside the canvas.
    mutating func draw(_ pixels: PixelBuffer, left: Int, top: Int) {
        for row in 0..<pixels.height {
            let from = row * pixels.bytesPerRow
            let to = ((top + row) * width + left) * 4
            bytes.replaceSubrange(to..<(to + pixels.bytesPerRow), with: pixels.bytes[from..<(from + pixels.bytesPerRow)])
        }
    }

    /// The canvas as a picture.
    var pixels: PixelBuffer {
        PixelBuffer(width: width, height: height, straightRGBA: bytes)
    }
}
