/// Walks a JPEG's marker segments up to the start of scan, where the metadata ends. Anything
/// malformed ends the walk, never a crash.
enum JPEGSegments {
    /// The payload of the first segment with `marker` for which `matches` holds.
    static func first(_ marker: UInt8, in bytes: UnsafeRawBufferPointer, where matches: (UnsafeRawBufferPointer) -> Bool)
        -> UnsafeRawBufferPointer?
    {
        var found: UnsafeRawBufferPointer?
        forEach(in: bytes) { current, segment in
            guard current == marker, matches(segment) else { return true }
            found = segment
            return false
        }
        return found
    }

    /// The payloads after `signature` of the segments with `marker` that begin with it anywhere
    /// in `bytes` past the first SOI (an appended image's too: an Ultra HDR gain map's), in file
    /// order, cut to the data there is, until `body` returns a value.
    static func firstSigned<Result>(
        _ marker: UInt8, _ signature: [UInt8], anywhereIn bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Result?
    ) -> Result? {
        var start = 2
        while start < bytes.count, let found = bytes[start...].firstRange(of: signature) {
            start = found.upperBound
            let segment = found.lowerBound - 4
            guard segment >= 0, bytes[segment] == 0xFF, bytes[segment + 1] == marker else { continue }
            let end = min(bytes.count, segment + 2 + (Int(bytes[segment + 2]) << 8 | Int(bytes[segment + 3])))
            guard end > found.upperBound, let result = body(UnsafeRawBufferPointer(rebasing: bytes[found.upperBound..<end])) else {
                continue
            }
            return result
        }
        return nil
    }

    /// Calls `body` with each segment's marker and payload, in file order, until it returns false.
    static func forEach(in bytes: UnsafeRawBufferPointer, _ body: (UInt8, UnsafeRawBufferPointer) -> Bool) {
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return }
        var offset = 2
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let current = bytes[offset + 1]
            // Start of scan or end of image: the metadata segments are behind us.
            if current == 0xDA || current == 0xD9 { return }
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard length >= 2, offset + 2 + length <= bytes.count else { return }
            guard body(current, UnsafeRawBufferPointer(rebasing: bytes[(offset + 4)..<(offset + 2 + length)])) else { return }
            offset += 2 + length
        }
    }

    /// Where the metadata segments go in a file this library writes: after SOI and a JFIF APP0.
    static func metadataInsertionOffset(in bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        guard bytes[2] == 0xFF, bytes[3] == 0xE0, bytes.count > 6 else { return 2 }
        return 4 + (Int(bytes[4]) << 8 | Int(bytes[5]))
    }

    /// Whether the file has Adobe's APP14 segment: its CMYK values are then stored inverted
    /// (255 means no ink), as Photoshop writes them.
    static func hasAdobeMarker(_ bytes: UnsafeRawBufferPointer) -> Bool {
        first(0xEE, in: bytes) { segment in segment.count >= 5 && segment.prefix(5).elementsEqual("Adobe".utf8) } != nil
    }
}
