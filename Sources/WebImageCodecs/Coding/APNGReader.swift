import Foundation

/// Animated PNG, which Debian's libpng cannot read: recognised here from its `acTL` chunk, and
/// decoded frame by frame through ``APNGFrameSource``.
enum APNGReader {
    /// Whether the PNG has an `acTL` chunk before its image data, read from the chunk headers alone.
    static func isAnimated(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= 8, bytes.prefix(8).elementsEqual(PNGChunk.signature) else { return false }
        var offset = 8
        while offset + 8 <= bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let type = bytes[(offset + 4)..<(offset + 8)]
            if type.elementsEqual("acTL".utf8) { return true }
            if type.elementsEqual("IDAT".utf8) || type.elementsEqual("IEND".utf8) || length > bytes.count { return false }
            offset += 12 + length
        }
        return false
    }

    /// Decodes every frame (or the first) and composes them. `decodeFrame` decodes one
    /// standalone PNG to premultiplied pixels.
    static func decode(
        _ bytes: UnsafeRawBufferPointer, options: DecodeOptions,
        decodeFrame: @escaping @Sendable (Data) throws(WebImageError) -> PixelBuffer
    ) throws(WebImageError) -> Image {
        var source = try APNGFrameSource(bytes, limits: options.limits, decodeFrame: decodeFrame)
        return try source.image(options: options, inputSize: bytes.count, format: .png)
    }
}
