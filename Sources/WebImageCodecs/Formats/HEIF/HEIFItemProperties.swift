/// The sizes a HEIF file's item properties declare (`ispe` and `clap` in `meta/iprp/ipco`), checked
/// before libheif decodes anything.
///
/// libheif 1.15 (Debian 12's) takes a grid tile's displayed width from its `clap` box as written,
/// up to 2^31, and adds the tiles' widths together as `int` to place them: a tile claiming a clean
/// aperture of a billion pixels pushes the next tile's origin past `INT_MAX` to a negative offset,
/// which its parallel tile decoder then writes at (a SEGV in `memmove` from one changed byte of
/// `grid.heic`; the sequential decoder stops one tile earlier by luck). libheif 1.18 checks each
/// tile's size against its limit and counts origins unsigned; until Debian ships it, no property
/// may declare a side over libheif's own 32,768-pixel limit, which no real image reaches.
enum HEIFItemProperties {
    /// The largest side an `ispe` or a clean aperture may declare.
    static let maximumSide = 32_768

    /// Throws when a property in the file declares a side over ``maximumSide`` or a clean aperture
    /// that is not a positive size; a file whose boxes do not parse is left to libheif to refuse.
    static func check(_ bytes: UnsafeBufferPointer<UInt8>) throws(WebImageError) {
        try walk(bytes, from: 0, to: bytes.count, depth: 0)
    }

    private static func walk(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, depth: Int) throws(WebImageError) {
        var offset = start
        while let box = Box(bytes, at: offset, end: end) {
            switch box.type {
            case "meta" where depth == 0:
                try walk(bytes, from: box.contentStart + 4, to: box.end, depth: 1)  // a full box: version and flags first
            case "iprp" where depth == 1, "ipco" where depth == 2:
                try walk(bytes, from: box.contentStart, to: box.end, depth: depth + 1)
            case "ispe" where depth == 3:
                try checkSpatialExtent(bytes, box)
            case "clap" where depth == 3:
                try checkCleanAperture(bytes, box)
            default:
                break
            }
            offset = box.end
        }
    }

    /// `ispe`: version and flags, then width and height as 32-bit numbers.
    private static func checkSpatialExtent(_ bytes: UnsafeBufferPointer<UInt8>, _ box: Box) throws(WebImageError) {
        guard box.end - box.contentStart >= 12 else { return }
        let width = Int(bigEndian32(bytes, box.contentStart + 4))
        let height = Int(bigEndian32(bytes, box.contentStart + 8))
        guard width <= maximumSide, height <= maximumSide else {
            throw WebImageError(.tooLarge, "HEIF: an image property declares \(width)x\(height), over \(maximumSide) pixels a side")
        }
    }

    /// `clap`: width, height, horizontal and vertical offset, each a 32-bit numerator and
    /// denominator (ISO/IEC 14496-12 12.1.4); the offsets are signed.
    private static func checkCleanAperture(_ bytes: UnsafeBufferPointer<UInt8>, _ box: Box) throws(WebImageError) {
        guard box.end - box.contentStart >= 32 else { return }
        func fraction(_ index: Int, signed: Bool) -> Double? {
            let numerator = bigEndian32(bytes, box.contentStart + 8 * index)
            let denominator = bigEndian32(bytes, box.contentStart + 8 * index + 4)
            guard denominator > 0, denominator <= UInt32(Int32.max) else { return nil }
            let value = signed ? Double(Int32(bitPattern: numerator)) : Double(numerator)
            return value / Double(denominator)
        }
        let limit = Double(maximumSide)
        guard let width = fraction(0, signed: false), let height = fraction(1, signed: false),
            let horizontal = fraction(2, signed: true), let vertical = fraction(3, signed: true),
            width > 0, width <= limit, height > 0, height <= limit, abs(horizontal) <= limit, abs(vertical) <= limit
        else {
            throw WebImageError(.decodeFailed, "HEIF: a clean aperture (clap) is not a size within \(maximumSide) pixels a side")
        }
    }

    private static func bigEndian32(_ bytes: UnsafeBufferPointer<UInt8>, _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }

    /// One box's type and extent: a 32-bit size, a 64-bit one after the type when that is 1, or
    /// the rest of the parent when it is 0 (ISO/IEC 14496-12 4.2).
    private struct Box {
        let type: String
        let contentStart: Int
        let end: Int

        init?(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int, end parentEnd: Int) {
            guard offset + 8 <= parentEnd else { return nil }
            let size32 = HEIFItemProperties.bigEndian32(bytes, offset)
            type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            switch size32 {
            case 0:
                contentStart = offset + 8
                end = parentEnd
            case 1:
                guard offset + 16 <= parentEnd else { return nil }
                let size =
                    UInt64(HEIFItemProperties.bigEndian32(bytes, offset + 8)) << 32
                    | UInt64(HEIFItemProperties.bigEndian32(bytes, offset + 12))
                guard size >= 16, size <= UInt64(parentEnd - offset) else { return nil }
                contentStart = offset + 16
                end = offset + Int(size)
            default:
                guard size32 >= 8, Int(size32) <= parentEnd - offset else { return nil }
                contentStart = offset + 8
                end = offset + Int(size32)
            }
        }
    }
}
