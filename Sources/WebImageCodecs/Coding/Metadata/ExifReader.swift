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

    /// Apple's HDR headroom (log2) for an iPhone photograph's gain map, from its EXIF's Apple
    /// maker note ("Apple iOS", then an IFD, big-endian, offsets from the note's start): tags 33
    /// and 48 (signed rationals; a missing one is 0) by the formula of Apple's "Applying Apple HDR
    /// effect to your photos", as libavif and Skia read them. Nil without either tag.
    static func appleHeadroom(inTIFF tiff: UnsafeRawBufferPointer) -> Double? {
        guard let layout = Layout(tiff), let pointer = layout.entry(0x8769), let exif = layout.read32(pointer + 8),
            let note = layout.entry(0x927C, inIFDAt: exif), let count = layout.read32(note + 4), let start = layout.read32(note + 8),
            count >= 14, start <= tiff.count - count
        else { return nil }
        let makerNote = UnsafeRawBufferPointer(rebasing: tiff[start..<(start + count)])
        guard makerNote.prefix(14).elementsEqual(Array("Apple iOS".utf8) + [0, 0, 1] + Array("MM".utf8)) else { return nil }
        let apple = Layout(makerNote, bigEndian: true)
        func rational(_ tag: Int) -> Double? {
            guard let entry = apple.entry(tag, inIFDAt: 14), apple.read16(entry + 2) == 10, let at = apple.read32(entry + 8),
                let numerator = apple.read32(at), let denominator = apple.read32(at + 4), denominator != 0
            else { return nil }
            return Double(Int32(truncatingIfNeeded: numerator)) / Double(denominator)
        }
        let (tag33, tag48) = (rational(33), rational(48))
        guard tag33 != nil || tag48 != nil else { return nil }
        let (maker33, maker48) = (tag33 ?? 0, tag48 ?? 0)
        if maker33 < 1 { return maker48 <= 0.01 ? -20 * maker48 + 1.8 : -0.101 * maker48 + 1.601 }
        return maker48 <= 0.01 ? -70 * maker48 + 3 : -0.303 * maker48 + 2.303
    }

    /// A TIFF structure's byte order and IFDs.
    struct Layout {
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

        /// IFDs without a TIFF header before them (a maker note's), in `bigEndian` order.
        init(_ bytes: UnsafeRawBufferPointer, bigEndian: Bool) {
            (tiff, self.bigEndian) = (bytes, bigEndian)
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
            read32(4).flatMap { entry(tag, inIFDAt: $0) }
        }

        /// Where the entry for `tag` of the IFD at `ifd` starts, within the bytes.
        func entry(_ tag: Int, inIFDAt ifd: Int) -> Int? {
            guard let count = read16(ifd) else { return nil }
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
