/// The picture sizes the HEVC sequence parameter sets in a HEIF file declare, wherever they are:
/// in each item's `hvcC` configuration and inline in the coded data. libheif hands both to
/// libde265, which allocates and decodes a picture of the SPS's size whatever the container's
/// `ispe` says, so a few hundred bytes of skipped blocks could make it decode 16384x16384 pictures
/// for a file that says 64x64 (`oversized-stream.heic` in the tests). ``HEIFCoder`` refuses files
/// whose sets declare more than its budget before libheif decodes anything.
///
/// Sets are found by their NAL header (type 33, layer 0, temporal id 1: `42 01`) rather than by
/// walking items, so the count is over the whole file, thumbnails and alpha included; a byte pair
/// in coded data that merely looks like one almost never parses to a large size.
enum HEVCParameterSets {
    /// Every set's luma width and height, in file order.
    static func pictureSizes(in bytes: UnsafeBufferPointer<UInt8>) -> [(width: Int, height: Int)] {
        guard bytes.count > 2 else { return [] }
        var sizes: [(width: Int, height: Int)] = []
        for start in 0..<(bytes.count - 2) where bytes[start] == 0x42 && bytes[start + 1] == 0x01 {
            let end = min(bytes.count, start + 2 + 160)
            if let size = pictureSize(rbsp: payload(UnsafeBufferPointer(rebasing: bytes[(start + 2)..<end]))) {
                sizes.append(size)
            }
        }
        return sizes
    }

    /// The NAL unit's payload without its emulation-prevention bytes (00 00 03 → 00 00).
    static func payload(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var zeros = 0
        for byte in bytes {
            if zeros >= 2 && byte == 3 {
                zeros = 0
                continue
            }
            zeros = byte == 0 ? zeros + 1 : 0
            output.append(byte)
        }
        return output
    }

    /// The size a sequence parameter set's payload declares (H.265 7.3.2.2), or nil when the
    /// bytes do not parse as one.
    static func pictureSize(rbsp: [UInt8]) -> (width: Int, height: Int)? {
        var reader = BitReader(bytes: rbsp)
        guard reader.skip(4), let subLayers = reader.bits(3), subLayers <= 6, reader.skip(1) else { return nil }
        // profile_tier_level: the general profile and level (96 bits), then per sub-layer flags.
        guard reader.skip(96) else { return nil }
        var present: [(profile: Bool, level: Bool)] = []
        for _ in 0..<subLayers {
            guard let profile = reader.bits(1), let level = reader.bits(1) else { return nil }
            present.append((profile == 1, level == 1))
        }
        if subLayers > 0, !reader.skip(2 * (8 - subLayers)) { return nil }
        for layer in present {
            if layer.profile, !reader.skip(88) { return nil }
            if layer.level, !reader.skip(8) { return nil }
        }
        guard let identifier = reader.exponentialGolomb(), identifier <= 15,
            let chroma = reader.exponentialGolomb(), chroma <= 3, chroma != 3 || reader.skip(1),
            let width = reader.exponentialGolomb(), let height = reader.exponentialGolomb(), width > 0, height > 0
        else { return nil }
        return (width, height)
    }

    /// Reads bits most significant first.
    struct BitReader {
        let bytes: [UInt8]
        var position = 0

        mutating func bits(_ count: Int) -> Int? {
            guard position + count <= bytes.count * 8 else { return nil }
            var value = 0
            for _ in 0..<count {
                value = value << 1 | Int(bytes[position >> 3] >> (7 - UInt8(position & 7)) & 1)
                position += 1
            }
            return value
        }

        mutating func skip(_ count: Int) -> Bool {
            guard position + count <= bytes.count * 8 else { return false }
            position += count
            return true
        }

        /// An unsigned exponential-Golomb number, ue(v); nil past 31 leading zeros.
        mutating func exponentialGolomb() -> Int? {
            var zeros = 0
            while true {
                guard let bit = bits(1) else { return nil }
                if bit == 1 { break }
                zeros += 1
                guard zeros <= 31 else { return nil }
            }
            guard let rest = bits(zeros) else { return nil }
            return (1 << zeros) - 1 + rest
        }
    }
}
