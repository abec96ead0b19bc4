/// A JPEG XL's ISO 21496-1 gain map: a `jhgm` box in the file's container (ISO/IEC 18181-2),
/// which libjxl 0.11 and later read and write as a bundle (`JxlGainMapReadBundle`,
/// `lib/extras/gain_map.cc`) and Debian's libjxl 0.7 does not know. The bundle is a version byte
/// (0, the only one libjxl defines), the metadata's size (16 bits, big-endian) and the metadata,
/// ISO 21496-1's binary form from its versions on (as in a JPEG's APP2 after the URN: no version
/// byte of its own, as an AVIF's `tmap` item has), then the size of the gain map's colour encoding
/// (8 bits) and the encoding, the size of its compressed ICC profile (32 bits) and the profile,
/// and the rest: the gain map image, a bare JPEG XL codestream.
///
/// A bare codestream (no container) has no boxes, so no gain map. A `jhgm` box of another version
/// is not read (its layout is not defined); nor is metadata whose minimum version is not 0, which
/// ISO 21496-1 tells a reader to ignore (libavif does the same in an AVIF). A box whose sizes run
/// past its end, or that holds no gain map image, or whose metadata does not read, declares a gain
/// map without values. A `jhgm` box compressed into a `brob` box is not read.
enum GainMapJXL {
    /// The container's first box: the signature box, `JXL ` and four fixed bytes.
    static let signature: [UInt8] = [0, 0, 0, 12] + Array("JXL ".utf8) + [0x0D, 0x0A, 0x87, 0x0A]

    /// The file's gain map, or nil when it has none that can be read.
    static func find(in bytes: UnsafeRawBufferPointer) -> FoundGainMap? {
        guard bytes.starts(with: signature), let box = ISOBoxes(bytes).first("jhgm") else { return nil }
        var reader = BigEndianReader(box)
        guard let version = reader.unsigned(1), version == 0 else { return nil }
        guard let metadataSize = reader.unsigned(2), let metadata = reader.bytes(Int(metadataSize)),
            let encodingSize = reader.unsigned(1), reader.bytes(Int(encodingSize)) != nil,
            let profileSize = reader.unsigned(4), reader.bytes(Int(profileSize)) != nil, !reader.rest.isEmpty
        else { return FoundGainMap(metadata: nil) }
        guard GainMapISO.hasKnownMinimumVersion(metadata) else { return nil }
        return FoundGainMap(metadata: GainMapISO.metadata(payload: Array(metadata)))
    }
}
