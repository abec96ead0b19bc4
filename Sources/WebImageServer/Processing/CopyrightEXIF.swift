import Foundation
import WebImageCodecs

/// `keep_copyright` (imgproxy's default): when metadata is stripped, the EXIF keeps IFD0's
/// Copyright and Artist and nothing else, as imgproxy's `vips_strip` keeps `exif-ifd0-Copyright`
/// and `exif-ifd0-Artist` (`vips/vips.c`). imgproxy also keeps IPTC's by-line, credit and
/// copyright notice and XMP's rights and creators; this server writes no IPTC or XMP at all.
enum CopyrightEXIF {
    /// The tags kept: Artist (0x013B) and Copyright (0x8298), both ASCII.
    static let tags: [(tag: UInt16, name: String)] = [(0x013B, "Image Artist"), (0x8298, "Image Copyright")]

    /// A little-endian TIFF with only `tiff`'s Artist and Copyright, nil when it has neither.
    static func kept(from tiff: Data) -> Data? {
        let found = ExifDump.dump(Array(tiff)[...])
        let values = tags.compactMap { entry -> (tag: UInt16, text: [UInt8])? in
            guard let value = found.first(where: { $0.0 == entry.name })?.1, !value.isEmpty else { return nil }
            return (entry.tag, Array(value.utf8) + [0])
        }
        guard !values.isEmpty else { return nil }
        return minimalTIFF(values)
    }

    /// IFD0 with the ASCII `entries` (in tag order), their text after the directory.
    static func minimalTIFF(_ entries: [(tag: UInt16, text: [UInt8])]) -> Data {
        var bytes: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0]
        func append16(_ value: Int) { bytes += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
        func append32(_ value: Int) {
            append16(value & 0xFFFF)
            append16(value >> 16 & 0xFFFF)
        }
        append16(entries.count)
        var textOffset = 8 + 2 + entries.count * 12 + 4
        var texts: [UInt8] = []
        for entry in entries {
            append16(Int(entry.tag))
            append16(2)  // ASCII
            append32(entry.text.count)
            if entry.text.count <= 4 {
                bytes += entry.text + [UInt8](repeating: 0, count: 4 - entry.text.count)
            } else {
                append32(textOffset)
                texts += entry.text
                textOffset += entry.text.count
            }
        }
        append32(0)  // no IFD1
        return Data(bytes + texts)
    }
}
