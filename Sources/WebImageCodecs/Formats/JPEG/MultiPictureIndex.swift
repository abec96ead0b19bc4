/// The images a JPEG's Multi-Picture Format index lists (CIPA DC-007): an APP2 segment `MPF\0`,
/// then a TIFF structure whose first IFD's MPEntry tag (0xB002) holds 16 bytes an image: its
/// attributes, size, and offset from the TIFF header's start (0 for the first image). This is how
/// phones append a gain map (Apple's, Ultra HDR's) or a preview after the primary image.
enum MultiPictureIndex {
    static let signature = Array("MPF".utf8) + [0]

    /// Whether an APP2 segment is a Multi-Picture index.
    static func isIndex(_ segment: UnsafeRawBufferPointer) -> Bool {
        segment.count > 12 && segment.prefix(4).elementsEqual(signature)
    }

    /// The byte ranges within `bytes` of the images listed after the first (at most 15): none
    /// without an index; an entry that does not read or lies outside the file is left out.
    static func appendedImages(in bytes: UnsafeRawBufferPointer) -> [Range<Int>] {
        guard let segment = JPEGSegments.first(0xE2, in: bytes, where: isIndex), let file = bytes.baseAddress,
            let header = segment.baseAddress.map({ $0 - file + signature.count }),
            let layout = ExifReader.Layout(UnsafeRawBufferPointer(rebasing: segment[signature.count...])),
            let entry = layout.entry(0xB002), let size = layout.read32(entry + 4), let entries = layout.read32(entry + 8)
        else { return [] }
        var images: [Range<Int>] = []
        for index in 1..<max(1, min(size / 16, 16)) {
            let at = entries + index * 16
            guard let length = layout.read32(at + 4), let offset = layout.read32(at + 8), offset > 0,
                header + offset < bytes.count, length <= bytes.count - header - offset
            else { continue }
            images.append((header + offset)..<(header + offset + length))
        }
        return images
    }
}
