import Foundation

/// Finds and sets the EXIF orientation without a full EXIF parser: the TIFF header (either byte
/// order), IFD0, and its Orientation entry (tag 0x0112). Anything malformed gives nil, never a
/// crash.
enum ExifReader {
    static func orientation(inJPEG bytes: UnsafeRawBufferPointer) -> ExifOrientation? {
        var found: ExifOrientation?
        _ = JPEGSegments.first(0xE1, in: bytes) { segment in
            found = tiff(inAPP1: segment).flatMap(orientation(inTIFF:))
            return found != nil
        }
        return found
    }

    /// The TIFF structure of an APP1 segment or WebP `EXIF` chunk: what follows `Exif\0\0`, or
    /// the bytes themselves when they start with a TIFF header.
    static func tiff(inAPP1 segment: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        let signature: [UInt8] = Array("Exif".utf8) + [0, 0]
        if segment.count >= 14, segment.prefix(6).elementsEqual(signature) { return UnsafeRawBufferPointer(rebasing: segment[6...]) }
        if segment.count >= 8, Layout(segment) != nil { return segment }
        return nil
    }

    /// A TIFF file's bits per sample (IFD0's BitsPerSample, the first channel's).
    static func bitsPerSample(inTIFF tiff: UnsafeRawBufferPointer) -> Int? {
        Layout(tiff)?.firstShort(0x0102)
    }

    static func orientation(inTIFF tiff: UnsafeRawBufferPointer) -> ExifOrientation? {
        guard let layout = Layout(tiff), let offset = layout.orientationValueOffset else { return nil }
        return layout.read16(offset).flatMap(ExifOrientation.init(rawValue:))
    }

    /// `tiff` with its Orientation entry set to `orientation`; a file without the entry gets a
    /// minimal EXIF holding only the orientation, unless the orientation is `.up` (which no
    /// entry already means).
    static func setting(_ orientation: ExifOrientation, in tiff: Data) -> Data {
        var patched = tiff
        let found = tiff.withUnsafeBytes { bytes -> (position: Int, bigEndian: Bool)? in
            guard let layout = Layout(bytes), let position = layout.orientationValueOffset else { return nil }
            return (position, layout.bigEndian)
        }
        guard let (position, bigEndian) = found else { return orientation == .up ? tiff : minimal(orientation) }
        let value = UInt16(orientation.rawValue)
        patched[patched.startIndex + position] = UInt8(truncatingIfNeeded: bigEndian ? value >> 8 : value)
        patched[patched.startIndex + position + 1] = UInt8(truncatingIfNeeded: bigEndian ? value : value >> 8)
        return patched
    }

    /// A little-endian TIFF with one IFD entry: the orientation.
    static func minimal(_ orientation: ExifOrientation) -> Data {
        Data([0x49, 0x49, 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, UInt8(orientation.rawValue), 0, 0, 0, 0, 0, 0, 0])
    }

    /// A TIFF header's byte order and IFD0.
    private struct Layout {
        let tiff: UnsafeRawBufferPointer
        let bigEndian: Bool

        init?(_ tiff: UnsafeRawBufferPointer) {
            guard tiff.count >= 8 else { return nil }
            switch (tiff[0], tiff[1]) {
            case (0x49, 0x49): bigEndian = false
            case (0x4D, 0x4D): bigEndian = true
            default: return nil
            }
            self.tiff = tiff
            guard read16(2) == 42 else { return nil }
        }

        func read16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= tiff.count else { return nil }
            return bigEndian ? Int(tiff[at]) << 8 | Int(tiff[at + 1]) : Int(tiff[at + 1]) << 8 | Int(tiff[at])
        }

        func read32(_ at: Int) -> Int? {
            guard let high = read16(bigEndian ? at : at + 2), let low = read16(bigEndian ? at + 2 : at) else { return nil }
            return high << 16 | low
        }

        /// Where IFD0's Orientation value lies, within the bytes.
        var orientationValueOffset: Int? {
            entry(0x0112).flatMap { read16($0 + 8) != nil ? $0 + 8 : nil }
        }

        /// Where IFD0's entry for `tag` starts, within the bytes.
        func entry(_ tag: Int) -> Int? {
            guard let ifd = read32(4), let count = read16(ifd) else { return nil }
            for entry in 0..<count {
                let position = ifd + 2 + entry * 12
                guard let found = read16(position) else { return nil }
                if found == tag { return position }
            }
            return nil
        }

        /// The first SHORT of IFD0's `tag`: in the entry when its values fit in four bytes, else
        /// where the entry points.
        func firstShort(_ tag: Int) -> Int? {
            guard let position = entry(tag), let count = read16(position + 4) else { return nil }
            return count <= 2 ? read16(position + 8) : read32(position + 8).flatMap(read16)
        }
    }
}
