/// The pixels of one image or frame: 8-bit RGBA with **straight (unpremultiplied) alpha**, rows
/// packed with no padding (`bytesPerRow == width * 4`), top row first.
///
/// Straight alpha is what PNG, WebP and GIF store, so decoding and re-encoding to a lossless
/// format changes no value: a pixel `(200, 100, 50, 3)` stays that, where 8-bit premultiplied
/// storage would keep `(2, 1, 1, 3)` and give back `(170, 85, 85, 3)`. Transforms that mix
/// neighbouring pixels (resampling, blur, rotation by other angles than right ones, pixelation)
/// premultiply inside, in floating point, so transparent pixels add no colour to their
/// neighbours. The buffer is a value with copy-on-write storage.
public struct PixelBuffer: Sendable, Equatable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// `width * height * 4` bytes of straight RGBA.
    public private(set) var bytes: [UInt8]

    /// Bytes in one row.
    public var bytesPerRow: Int { width * 4 }

    /// Wraps straight (unpremultiplied) RGBA bytes, as decoders and files hold them.
    public init(width: Int, height: Int, straightRGBA bytes: [UInt8]) {
        precondition(width >= 0 && height >= 0 && bytes.count == width * height * 4, "RGBA bytes must be width × height × 4")
        self.width = width
        self.height = height
        self.bytes = bytes
    }

    /// Divides alpha out of premultiplied RGBA bytes (rounded to the nearest level; a
    /// transparent pixel becomes `(0, 0, 0, 0)`).
    public init(width: Int, height: Int, premultipliedRGBA bytes: [UInt8]) {
        var straight = bytes
        straight.withUnsafeMutableBufferPointer { buffer in
            var index = 0
            while index + 3 < buffer.count {
                let alpha = Int(buffer[index + 3])
                if alpha != 255 {
                    for channel in 0..<3 {
                        buffer[index + channel] = alpha == 0 ? 0 : UInt8(min(255, (Int(buffer[index + channel]) * 255 + alpha / 2) / alpha))
                    }
                }
                index += 4
            }
        }
        self.init(width: width, height: height, straightRGBA: straight)
    }

    /// The pixels with every colour channel multiplied by alpha (rounded): the image composited
    /// over black, as a format without alpha shows it.
    public func premultipliedRGBA() -> [UInt8] {
        var premultiplied = bytes
        premultiplied.withUnsafeMutableBufferPointer { buffer in
            var index = 0
            while index < buffer.count {
                let alpha = UInt32(buffer[index + 3])
                if alpha != 255 {
                    for channel in 0..<3 {
                        buffer[index + channel] = UInt8((UInt32(buffer[index + channel]) * alpha + 127) / 255)
                    }
                }
                index += 4
            }
        }
        return premultiplied
    }

    /// The straight pixel at (x, y), as red, green, blue and alpha.
    public func pixel(x: Int, y: Int) -> (red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8) {
        let offset = y * bytesPerRow + x * 4
        return (bytes[offset], bytes[offset + 1], bytes[offset + 2], bytes[offset + 3])
    }

    /// Whether every pixel is fully opaque: the alpha bytes ANDed together eight bytes at a time
    /// (two pixels per load), stopping at the first block of rows with transparency.
    /// Transforms ask it to take their opaque fast path.
    public var isOpaque: Bool {
        bytes.withUnsafeBytes { raw in
            let alphas: UInt64 = 0xFF00_0000_FF00_0000
            let words = raw.count / 8
            var index = 0
            while index < words {
                let end = min(words, index + 4096)
                var all = alphas
                while index < end {
                    all &= raw.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)
                    index += 1
                }
                if all & alphas != alphas { return false }
            }
            return raw.count % 8 == 0 || raw[raw.count - 1] == 255
        }
    }
}
