/// The pixels of one image or frame: 8-bit RGBA, **premultiplied alpha**, rows packed with no
/// padding (`bytesPerRow == width * 4`), top row first.
///
/// Premultiplied means each colour channel is already multiplied by alpha: a half-transparent
/// pure red pixel is `(128, 0, 0, 128)`. Resampling and compositing are then correct without
/// dark fringes. ``straightRGBA()`` gives the unmultiplied form that file formats store.
/// The buffer is a value with copy-on-write storage.
public struct PixelBuffer: Sendable, Equatable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// `width * height * 4` bytes of premultiplied RGBA.
    public private(set) var bytes: [UInt8]

    /// Bytes in one row.
    public var bytesPerRow: Int { width * 4 }

    /// Wraps premultiplied RGBA bytes.
    public init(width: Int, height: Int, premultipliedRGBA bytes: [UInt8]) {
        precondition(width >= 0 && height >= 0 && bytes.count == width * height * 4, "RGBA bytes must be width × height × 4")
        self.width = width
        self.height = height
        self.bytes = bytes
    }

    /// Premultiplies straight (unmultiplied) RGBA bytes, as decoders and files hold them.
    public init(width: Int, height: Int, straightRGBA bytes: [UInt8]) {
        var premultiplied = bytes
        Self.premultiply(&premultiplied)
        self.init(width: width, height: height, premultipliedRGBA: premultiplied)
    }

    /// The pixels with alpha divided out again: what PNG and WebP files store.
    public func straightRGBA() -> [UInt8] {
        var straight = bytes
        straight.withUnsafeMutableBufferPointer { buffer in
            var index = 0
            while index < buffer.count {
                let alpha = Int(buffer[index + 3])
                if alpha != 255 {
                    for channel in 0..<3 {
                        buffer[index + channel] = alpha == 0 ? 0 : UInt8(min(255, (Int(buffer[index + channel]) * 255 + alpha / 2) / alpha))
                    }
                }
                index += 4
            }
        }
        return straight
    }

    /// The premultiplied pixel at (x, y), as red, green, blue and alpha.
    public func pixel(x: Int, y: Int) -> (red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8) {
        let offset = y * bytesPerRow + x * 4
        return (bytes[offset], bytes[offset + 1], bytes[offset + 2], bytes[offset + 3])
    }

    /// Whether every pixel is fully opaque.
    public var isOpaque: Bool {
        bytes.withUnsafeBufferPointer { buffer in
            stride(from: 3, to: buffer.count, by: 4).allSatisfy { buffer[$0] == 255 }
        }
    }

    static func premultiply(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBufferPointer { buffer in
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
    }
}
