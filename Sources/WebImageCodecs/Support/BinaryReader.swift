import Foundation

/// Reads what ``BinaryWriter`` wrote, checking every length against the bytes that are there.
package struct BinaryReader {
    package struct OutOfBounds: Error {}

    private let bytes: UnsafeRawBufferPointer
    package private(set) var offset = 0

    package init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    package var remaining: Int { bytes.count - offset }

    package mutating func readByte() throws(OutOfBounds) -> UInt8 {
        guard remaining >= 1 else { throw OutOfBounds() }
        defer { offset += 1 }
        return bytes[offset]
    }

    package mutating func readUInt32() throws(OutOfBounds) -> UInt32 {
        guard remaining >= 4 else { throw OutOfBounds() }
        defer { offset += 4 }
        return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    package mutating func readUInt64() throws(OutOfBounds) -> UInt64 {
        guard remaining >= 8 else { throw OutOfBounds() }
        defer { offset += 8 }
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    package mutating func readDouble() throws(OutOfBounds) -> Double {
        Double(bitPattern: try readUInt64())
    }

    package mutating func readRaw(_ count: Int) throws(OutOfBounds) -> UnsafeRawBufferPointer {
        guard count >= 0, remaining >= count else { throw OutOfBounds() }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }

    package mutating func readOptionalBytes() throws(OutOfBounds) -> UnsafeRawBufferPointer? {
        let length = try readUInt32()
        guard length != BinaryWriter.absent else { return nil }
        return try readRaw(Int(length))
    }

    package mutating func readOptionalString() throws(OutOfBounds) -> String? {
        try readOptionalBytes().map { String(decoding: $0, as: UTF8.self) }
    }
}
