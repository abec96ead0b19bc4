/// Finds the EXIF orientation in a JPEG's APP1 segment, without a full EXIF parser: the TIFF
/// header (either byte order), IFD0, and its Orientation entry (tag 0x0112). Anything malformed
/// gives nil, never a crash.
enum ExifReader {
    static func orientation(inJPEG bytes: UnsafeRawBufferPointer) -> ExifOrientation? {
        var found: ExifOrientation?
        _ = JPEGSegments.first(0xE1, in: bytes) { segment in
            found = orientation(inExif: segment)
            return found != nil
        }
        return found
    }

    private static func orientation(inExif segment: UnsafeRawBufferPointer) -> ExifOrientation? {
        let signature: [UInt8] = Array("Exif".utf8) + [0, 0]
        guard segment.count >= 14, segment.prefix(6).elementsEqual(signature) else { return nil }
        let tiff = UnsafeRawBufferPointer(rebasing: segment[6...])
        let bigEndian: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): bigEndian = false
        case (0x4D, 0x4D): bigEndian = true
        default: return nil
        }
        func read16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= tiff.count else { return nil }
            return bigEndian ? Int(tiff[at]) << 8 | Int(tiff[at + 1]) : Int(tiff[at + 1]) << 8 | Int(tiff[at])
        }
        func read32(_ at: Int) -> Int? {
            guard let high = read16(bigEndian ? at : at + 2), let low = read16(bigEndian ? at + 2 : at) else { return nil }
            return high << 16 | low
        }
        guard read16(2) == 42, let ifd = read32(4), let count = read16(ifd) else { return nil }
        for entry in 0..<count {
            let position = ifd + 2 + entry * 12
            guard let tag = read16(position) else { return nil }
            if tag == 0x0112, let value = read16(position + 8) {
                return ExifOrientation(rawValue: value)
            }
        }
        return nil
    }
}
