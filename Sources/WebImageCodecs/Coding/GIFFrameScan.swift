import Foundation

/// The size of every frame a GIF declares, read by walking its blocks without decoding anything.
///
/// giflib's `DGifSlurp` allocates each frame's palette indices at the size its image descriptor
/// declares, up to two gigapixels, whatever the canvas size; a small file can declare frames far
/// larger than its canvas and make giflib allocate and fill them. This scan lets the limits be
/// checked before giflib reads a frame.
enum GIFFrameScan {
    /// The declared width and height of each frame whose descriptor is present; a file cut short
    /// gives the frames before the cut, as giflib would read them.
    static func frameSizes(_ data: Data) -> [(width: Int, height: Int)] {
        data.withUnsafeBytes { bytes in
            var reader = Reader(bytes: bytes, offset: 13)
            if bytes.count >= 13 { reader.skipColorTable(flags: bytes[10]) }
            var sizes: [(width: Int, height: Int)] = []
            while let introducer = reader.byte() {
                switch introducer {
                case 0x21:
                    guard reader.byte() != nil else { return sizes }
                    reader.skipSubBlocks()
                case 0x2C:
                    guard let descriptor = reader.bytes(9) else { return sizes }
                    sizes.append((Int(descriptor[4]) | Int(descriptor[5]) << 8, Int(descriptor[6]) | Int(descriptor[7]) << 8))
                    reader.skipColorTable(flags: descriptor[8])
                    guard reader.byte() != nil else { return sizes }
                    reader.skipSubBlocks()
                default:
                    // The trailer, or bytes giflib refuses too.
                    return sizes
                }
            }
            return sizes
        }
    }

    /// A cursor over the bytes that never reads past their end.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset: Int

        mutating func byte() -> UInt8? {
            guard offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func bytes(_ count: Int) -> UnsafeRawBufferPointer? {
            guard offset + count <= bytes.count else { return nil }
            defer { offset += count }
            return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
        }

        /// Skips the colour table a packed-fields byte announces (its top bit), if any.
        mutating func skipColorTable(flags: UInt8) {
            if flags & 0x80 != 0 { offset += 3 << (Int(flags & 0x07) + 1) }
        }

        /// Skips data sub-blocks up to and including the empty one that ends them.
        mutating func skipSubBlocks() {
            while let size = byte(), size != 0 { offset += Int(size) }
        }
    }
}
