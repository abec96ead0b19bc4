/// A gain map's metadata in ISO 21496-1's binary form, which libultrahdr 1.4 writes in place of the
/// `hdrgm` XMP: an APP2 segment that begins with the standard's URN. The primary image's holds
/// only the versions (it declares the gain map); the gain map image's, after them, a flags byte
/// (bit 7: one set of values per channel; bit 6: the gain map's maths in the base image's colour
/// space) and big-endian fractions: the base and alternate images' HDR headroom (unsigned), then
/// per channel the gain map's minimum and maximum (signed), its gamma (unsigned), and the base and
/// alternate offsets (signed), every value but gamma in log2 units. This is the layout Skia's and
/// libultrahdr's readers take.
///
/// The values are reported as the `hdrgm` names say them (``GainMapMetadata``), as libultrahdr
/// converts them: the base rendition is HDR when its headroom is the larger; the headrooms are
/// then the capacities (smaller first), and the offsets the SDR and HDR ones. For an HDR base the
/// gain runs from it to the SDR alternate, so its minimum and maximum are negated and swapped into
/// `hdrgm`'s direction (SDR to HDR).
enum GainMapISO {
    /// What the segment's payload begins with.
    static let signature = Array("urn:iso:std:iso:ts:21496:-1".utf8) + [0]

    /// Whether an APP2 segment is ISO 21496-1 metadata (the primary image's declaration included).
    static func isMetadata(_ segment: UnsafeRawBufferPointer) -> Bool {
        segment.count >= signature.count + 4 && segment.prefix(signature.count).elementsEqual(signature)
    }

    /// The metadata of the first APP2 segment in `bytes` that holds the values (more than the
    /// versions): the gain map image's. Nil when there is none or it does not read.
    static func metadata(inFile bytes: UnsafeRawBufferPointer) -> GainMapMetadata? {
        let found = JPEGSegments.firstSigned(0xE2, signature, anywhereIn: bytes) { payload -> GainMapMetadata?? in
            payload.count > 4 ? .some(metadata(payload: Array(payload))) : nil
        }
        return found ?? nil
    }

    /// Whether a payload's minimum version (its first two bytes) is one this reader knows: 0, the
    /// only one there is. A reader must ignore metadata of another (ISO 21496-1; libavif does). A
    /// payload too short to say counts as known: it does not read, a gain map without values.
    static func hasKnownMinimumVersion<Bytes: Collection<UInt8>>(_ payload: Bytes) -> Bool {
        payload.prefix(2).allSatisfy { $0 == 0 }
    }

    /// The values of one payload (after the URN), or nil: a minimum version other than 0 (the
    /// only one there is), a payload cut short, a zero denominator, or bytes after the values of a
    /// writer version 0 (which has none: libavif refuses such metadata).
    static func metadata(payload: [UInt8]) -> GainMapMetadata? {
        var reader = FractionReader(bytes: payload)
        guard let minimumVersion = reader.unsigned16(), minimumVersion == 0, let writerVersion = reader.unsigned16(),
            let flags = reader.byte(),
            let baseHeadroom = reader.fraction(signed: false), let alternateHeadroom = reader.fraction(signed: false)
        else { return nil }
        var channels: [[Double]] = []
        for _ in 0..<(flags & 0x80 != 0 ? 3 : 1) {
            var values: [Double] = []
            for signed in [true, true, false, true, true] {
                guard let value = reader.fraction(signed: signed) else { return nil }
                values.append(value)
            }
            channels.append(values)
        }
        guard writerVersion > 0 || reader.offset == payload.count else { return nil }
        let field = { (index: Int) in channels.map { $0[index] } }
        let baseIsHDR = baseHeadroom > alternateHeadroom
        return GainMapMetadata(
            gainMapMin: baseIsHDR ? field(1).map { -$0 } : field(0), gainMapMax: baseIsHDR ? field(0).map { -$0 } : field(1),
            gamma: field(2), offsetSDR: field(baseIsHDR ? 4 : 3), offsetHDR: field(baseIsHDR ? 3 : 4),
            hdrCapacityMin: min(baseHeadroom, alternateHeadroom), hdrCapacityMax: max(baseHeadroom, alternateHeadroom),
            baseRenditionIsHDR: baseIsHDR)
    }

    /// Big-endian numbers read in turn; nil past the end.
    private struct FractionReader {
        let bytes: [UInt8]
        var offset = 0

        mutating func byte() -> UInt8? {
            guard offset < bytes.count else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func unsigned16() -> UInt16? {
            guard let high = byte(), let low = byte() else { return nil }
            return UInt16(high) << 8 | UInt16(low)
        }

        mutating func unsigned32() -> UInt32? {
            guard let high = unsigned16(), let low = unsigned16() else { return nil }
            return UInt32(high) << 16 | UInt32(low)
        }

        /// A numerator (signed or not) over an unsigned denominator; nil for a zero denominator.
        mutating func fraction(signed: Bool) -> Double? {
            guard let numerator = unsigned32(), let denominator = unsigned32(), denominator != 0 else { return nil }
            return (signed ? Double(Int32(bitPattern: numerator)) : Double(numerator)) / Double(denominator)
        }
    }
}
