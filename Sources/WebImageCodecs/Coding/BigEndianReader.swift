/// Big-endian unsigned numbers of 0 to 8 bytes read in turn from a buffer; nil past its end.
struct BigEndianReader {
    let buffer: UnsafeRawBufferPointer
    private(set) var offset = 0

    init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

    /// What is left to read.
    var rest: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: buffer[offset...]) }

    mutating func bytes(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, count <= buffer.count - offset else { return nil }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + count)])
    }

    mutating func unsigned64(_ count: Int) -> UInt64? {
        guard count <= 8, let bytes = bytes(count) else { return nil }
        return bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// A number of up to 4 bytes.
    mutating func unsigned(_ count: Int) -> UInt32? { count <= 4 ? unsigned64(count).map { UInt32($0) } : nil }

    /// A full box's version (its flags skipped).
    mutating func fullBoxVersion() -> UInt8? { unsigned(4).map { UInt8($0 >> 24) } }
}
