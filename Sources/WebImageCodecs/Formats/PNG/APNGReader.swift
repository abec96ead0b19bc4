import Foundation

/// Animated PNG, which Debian's libpng cannot read: recognised here from its `acTL` chunk, and
/// decoded frame by frame through ``APNGFrameSource``.
enum APNGReader {
    /// Whether the PNG has an `acTL` chunk before its image data and at least one frame control
    /// (`fcTL`), read from the chunk headers alone. An `acTL` with no frame control (some
    /// writers declare zero frames) leaves the default image, which is shown as a still, as
    /// browsers do.
    static func isAnimated(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= 8, bytes.prefix(8).elementsEqual(PNGChunk.signature) else { return false }
        var offset = 8
        var declared = false
        var hasFrameControl = false
        while offset + 8 <= bytes.count, !(declared && hasFrameControl) {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let type = bytes[(offset + 4)..<(offset + 8)]
            if type.elementsEqual("IDAT".utf8) && !declared || type.elementsEqual("IEND".utf8) || length > bytes.count { break }
            if type.elementsEqual("acTL".utf8) { declared = true }
            if type.elementsEqual("fcTL".utf8) { hasFrameControl = true }
            offset += 12 + length
        }
        return declared && hasFrameControl
    }
}
