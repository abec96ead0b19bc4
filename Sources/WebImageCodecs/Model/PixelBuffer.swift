/// The pixels of one image or frame: RGBA with **straight (unpremultiplied) alpha**, rows
/// packed with no padding (`bytesPerRow == width * bytesPerPixel`), top row first; 8 bits a
/// sample, or 16 (``bitsPerSample``) for a source decoded with
/// ``DecodeOptions/keepsHighBitDepth``.
///
/// A 16-bit buffer holds each sample as a native-endian `UInt16` (0...65535), in the source's own
/// transfer and primaries (``Image/sourceColor`` says which: a PQ photograph's samples are PQ
/// code values). The resampler, crop, quarter turns, flips, the canvas, blur and sharpening keep 16
/// bits; every other transformer, and every encoder of a format that cannot hold them, takes the
/// 8-bit reduction (``Image/reducedToEightBits()``), which tone-maps PQ and HLG.
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
    /// Bits in each sample: 8, or 16.
    public let bitsPerSample: Int
    /// `width * height * bytesPerPixel` bytes of straight RGBA (for 16 bits, native-endian
    /// `UInt16` samples).
    public private(set) var bytes: [UInt8]

    /// Bytes in one pixel: 4, or 8 at 16 bits a sample.
    public var bytesPerPixel: Int { bitsPerSample / 2 }

    /// Bytes in one row.
    public var bytesPerRow: Int { width * bytesPerPixel }

    /// Wraps straight (unpremultiplied) RGBA bytes, as decoders and files hold them.
    public init(width: Int, height: Int, straightRGBA bytes: [UInt8]) {
        self.init(width: width, height: height, bitsPerSample: 8, bytes: bytes)
    }

    /// Wraps straight 16-bit RGBA samples (0...65535).
    public init(width: Int, height: Int, straightRGBA16 samples: [UInt16]) {
        precondition(samples.count == width * height * 4, "RGBA samples must be width × height × 4")
        let bytes = samples.withUnsafeBytes { [UInt8]($0) }
        self.init(width: width, height: height, bitsPerSample: 16, bytes: bytes)
    }

    /// Wraps `bytes` of pixels of `bitsPerSample` (8 or 16) bits a sample.
    package init(width: Int, height: Int, bitsPerSample: Int, bytes: [UInt8]) {
        precondition(bitsPerSample == 8 || bitsPerSample == 16, "8 or 16 bits a sample")
        precondition(
            width >= 0 && height >= 0 && bytes.count == width * height * bitsPerSample / 2, "RGBA bytes must be width × height × pixel size"
        )
        self.width = width
        self.height = height
        self.bitsPerSample = bitsPerSample
        self.bytes = bytes
    }

    /// Whether the samples are 16 bits.
    public var isHighBitDepth: Bool { bitsPerSample == 16 }

    /// The 16-bit samples, R, G, B, A per pixel; an 8-bit buffer's widened (times 257).
    public var samples16: [UInt16] {
        guard isHighBitDepth else { return bytes.map { UInt16($0) * 257 } }
        return [UInt16](unsafeUninitializedCapacity: bytes.count / 2) { samples, initialized in
            bytes.withUnsafeBytes { raw in _ = UnsafeMutableRawBufferPointer(samples).copyMemory(from: raw) }
            initialized = bytes.count / 2
        }
    }

    /// Divides alpha out of premultiplied 8-bit RGBA bytes (rounded to the nearest level; a
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

    /// The 8-bit pixels with every colour channel multiplied by alpha (rounded): the image
    /// composited over black, as a format without alpha shows it.
    public func premultipliedRGBA() -> [UInt8] {
        precondition(!isHighBitDepth, "premultiplied bytes are of 8-bit pixels")
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

    /// The straight pixel at (x, y), as red, green, blue and alpha; a 16-bit sample rounded to
    /// 8 bits.
    public func pixel(x: Int, y: Int) -> (red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8) {
        guard isHighBitDepth else {
            let offset = y * bytesPerRow + x * 4
            return (bytes[offset], bytes[offset + 1], bytes[offset + 2], bytes[offset + 3])
        }
        let wide = pixel16(x: x, y: y)
        @inline(__always) func narrow(_ sample: UInt16) -> UInt8 { UInt8((UInt32(sample) + 128) / 257) }
        return (narrow(wide.red), narrow(wide.green), narrow(wide.blue), narrow(wide.alpha))
    }

    /// The straight pixel at (x, y) in 16 bits a sample (an 8-bit one times 257).
    public func pixel16(x: Int, y: Int) -> (red: UInt16, green: UInt16, blue: UInt16, alpha: UInt16) {
        guard isHighBitDepth else {
            let eight = pixel(x: x, y: y)
            return (UInt16(eight.red) * 257, UInt16(eight.green) * 257, UInt16(eight.blue) * 257, UInt16(eight.alpha) * 257)
        }
        let value = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: y * bytesPerRow + x * 8, as: SIMD4<UInt16>.self) }
        return (value[0], value[1], value[2], value[3])
    }

    /// Whether every pixel is fully opaque: the alpha bytes ANDed together eight bytes at a time
    /// (two pixels per load), stopping at the first block of rows with transparency.
    /// Transforms ask it to take their opaque fast path.
    public var isOpaque: Bool {
        bytes.withUnsafeBytes { raw in
            // Little-endian, as every platform Swift runs on here: a 16-bit pixel's alpha is its
            // last two bytes.
            let alphas: UInt64 = isHighBitDepth ? 0xFFFF_0000_0000_0000 : 0xFF00_0000_FF00_0000
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
