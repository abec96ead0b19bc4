import Foundation

/// Appends little-endian fixed-width values and length-prefixed byte strings to a buffer: the
/// encoding of the disk cache's journal records.
package struct BinaryWriter {
    /// The length written for an absent optional value.
    package static let absent: UInt32 = .max

    package private(set) var bytes: [UInt8] = []

    package init() {}

    package mutating func write(_ value: UInt8) {
        bytes.append(value)
    }

    package mutating func write(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func write(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func write(_ value: Double) {
        write(value.bitPattern)
    }

    package mutating func write(raw: some Sequence<UInt8>) {
        bytes.append(contentsOf: raw)
    }

    /// A length-prefixed byte string, or the absent marker for nil.
    package mutating func write(optional value: (some Collection<UInt8>)?) {
        guard let value else {
            write(Self.absent)
            return
        }
        write(UInt32(value.count))
        bytes.append(contentsOf: value)
    }

    package mutating func write(optional string: String?) {
        write(optional: string?.utf8)
    }
}
