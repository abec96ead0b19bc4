import CZlib
import Foundation

/// One chunk of a PNG stream: a four-letter type and its data. Reading checks lengths, never
/// CRCs (libpng checks those of what it decodes); writing computes the CRC.
struct PNGChunk {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    let type: String
    let data: [UInt8]

    /// The chunks of a PNG file, in order, up to IEND; nil when the signature or a length is wrong.
    static func chunks(in bytes: UnsafeRawBufferPointer) -> [PNGChunk]? {
        guard bytes.count >= 8, bytes.prefix(8).elementsEqual(signature) else { return nil }
        var chunks: [PNGChunk] = []
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard length <= bytes.count - offset - 12 else { return nil }
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            chunks.append(PNGChunk(type: type, data: Array(bytes[(offset + 8)..<(offset + 8 + length)])))
            offset += 12 + length
            if type == "IEND" { break }
        }
        return chunks
    }

    /// What an `IHDR` (the bit depth) or a `cICP` chunk (H.273 primaries, transfer and matrix)
    /// adds to `description`; any other chunk, or one of the wrong length, adds nothing.
    static func describe(_ description: inout ColorDescription?, type: String, data: UnsafeRawBufferPointer) {
        if type == "IHDR", data.count == 13 { description = ColorDescription(bitDepth: Int(data[8])) }
        if type == "cICP", data.count == 4 {
            description?.primaries = Int(data[0])
            description?.transfer = Int(data[1])
            description?.matrix = Int(data[2])
        }
    }

    /// Calls `body` with the type and data of each chunk before the first `IDAT` (where PNG's
    /// metadata lives), without copying; stops at a wrong signature or length.
    static func forEachBeforeImageData(in bytes: UnsafeRawBufferPointer, _ body: (String, UnsafeRawBufferPointer) -> Void) {
        guard bytes.count >= 8, bytes.prefix(8).elementsEqual(signature) else { return }
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard length <= bytes.count - offset - 12 else { return }
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            if type == "IDAT" || type == "IEND" { return }
            body(type, UnsafeRawBufferPointer(rebasing: bytes[(offset + 8)..<(offset + 8 + length)]))
            offset += 12 + length
        }
    }

    /// Length, type, data and CRC, ready to write.
    var encoded: [UInt8] {
        var output = Self.bigEndian(UInt32(data.count))
        let typeAndData = Array(type.utf8) + data
        output += typeAndData
        let crc = typeAndData.withUnsafeBufferPointer { buffer in
            crc32(0, buffer.baseAddress, uInt(buffer.count))
        }
        output += Self.bigEndian(UInt32(crc))
        return output
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    static func bigEndian16(_ value: UInt16) -> [UInt8] {
        [UInt8(value >> 8), UInt8(value & 0xFF)]
    }

    /// The big-endian integer at `offset` of the data, or nil past its end.
    func uint32(at offset: Int) -> UInt32? {
        guard offset >= 0, offset + 4 <= data.count else { return nil }
        return UInt32(data[offset]) << 24 | UInt32(data[offset + 1]) << 16 | UInt32(data[offset + 2]) << 8 | UInt32(data[offset + 3])
    }

    func uint16(at offset: Int) -> UInt16? {
        guard offset >= 0, offset + 2 <= data.count else { return nil }
        return UInt16(data[offset]) << 8 | UInt16(data[offset + 1])
    }
}
