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
        // `meta` is a full box: its version and flags come first.
        guard let meta = ISOBoxes(UnsafeRawBufferPointer(bytes)).first("meta"),
            let iprp = ISOBoxes(UnsafeRawBufferPointer(rebasing: meta.dropFirst(4))).first("iprp"), let ipco = ISOBoxes(iprp).first("ipco")
        else { return }
        for property in ISOBoxes(ipco).boxes {
            switch property.type {
            case "ispe": try checkSpatialExtent(property.payload)
            case "clap": try checkCleanAperture(property.payload)
            default: break
            }
        }
    }

    /// `ispe`: version and flags, then width and height as 32-bit numbers.
    private static func checkSpatialExtent(_ ispe: UnsafeRawBufferPointer) throws(WebImageError) {
        var reader = BigEndianReader(ispe)
        guard reader.unsigned(4) != nil, let width = reader.unsigned(4), let height = reader.unsigned(4) else { return }
        guard Int(width) <= maximumSide, Int(height) <= maximumSide else {
            throw WebImageError(.tooLarge, "HEIF: an image property declares \(width)x\(height), over \(maximumSide) pixels a side")
        }
    }

    /// `clap`: width, height, horizontal and vertical offset, each a 32-bit numerator and
    /// denominator (ISO/IEC 14496-12 12.1.4); the offsets are signed.
    private static func checkCleanAperture(_ clap: UnsafeRawBufferPointer) throws(WebImageError) {
        var reader = BigEndianReader(clap)
        let values = (0..<8).compactMap { _ in reader.unsigned(4) }
        guard values.count == 8 else { return }
        func fraction(_ index: Int, signed: Bool) -> Double? {
            let (numerator, denominator) = (values[2 * index], values[2 * index + 1])
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
}
