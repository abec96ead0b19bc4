/// Reads Thrift's compact protocol, the encoding of a Parquet file's footer and page headers
/// (Apache Thrift's `TCompactProtocol`: varints, zigzag integers, field ids as deltas, a field's
/// type in the low nibble of its header byte, booleans inside the header). Every read is checked
/// against the bytes there are and nesting is bounded, so a damaged or hostile footer is an error,
/// never a trap or a runaway recursion.
struct ThriftCompactReader {
    /// The compact protocol's type codes.
    enum FieldType: UInt8 {
        case stop = 0
        case boolTrue = 1
        case boolFalse = 2
        case byte = 3
        case i16 = 4
        case i32 = 5
        case i64 = 6
        case double = 7
        case binary = 8
        case list = 9
        case set = 10
        case map = 11
        case structure = 12
    }

    /// A field's header: its id and type.
    struct Field {
        var id: Int16
        var type: FieldType
    }

    private let bytes: [UInt8]
    private(set) var offset: Int
    private var lastFieldIDs: [Int16] = [0]

    /// Deeper nesting than this is refused (a Parquet footer nests five or six levels).
    static let maximumDepth = 32

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    mutating func byte() throws(ParquetError) -> UInt8 {
        guard offset < bytes.count else { throw ParquetError("the metadata ends early") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func varint() throws(ParquetError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let next = try byte()
            guard shift < 64 else { throw ParquetError("a varint in the metadata is longer than ten bytes") }
            value |= UInt64(next & 0x7F) << shift
            if next & 0x80 == 0 { return value }
            shift += 7
        }
    }

    mutating func int64() throws(ParquetError) -> Int64 {
        let raw = try varint()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    mutating func int32() throws(ParquetError) -> Int32 {
        let value = try int64()
        guard let narrowed = Int32(exactly: value) else { throw ParquetError("a 32-bit integer in the metadata is out of range") }
        return narrowed
    }

    mutating func double() throws(ParquetError) -> Double {
        guard bytes.count - offset >= 8 else { throw ParquetError("the metadata ends early") }
        var bits: UInt64 = 0
        for index in 0..<8 { bits |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        offset += 8
        return Double(bitPattern: bits)
    }

    mutating func binary() throws(ParquetError) -> ArraySlice<UInt8> {
        let length = try varint()
        guard length <= UInt64(bytes.count - offset) else { throw ParquetError("a string in the metadata runs past its end") }
        defer { offset += Int(length) }
        return bytes[offset..<(offset + Int(length))]
    }

    mutating func string() throws(ParquetError) -> String {
        String(decoding: try binary(), as: UTF8.self)
    }

    /// Enters a struct: its fields' ids count from 0 again.
    mutating func beginStruct() throws(ParquetError) {
        guard lastFieldIDs.count < Self.maximumDepth else { throw ParquetError("the metadata nests too deep") }
        lastFieldIDs.append(0)
    }

    mutating func endStruct() {
        lastFieldIDs.removeLast()
    }

    /// The next field's header, or nil at the struct's end.
    mutating func field() throws(ParquetError) -> Field? {
        let header = try byte()
        guard let type = FieldType(rawValue: header & 0x0F) else { throw ParquetError("the metadata has an unknown type \(header & 0x0F)") }
        if type == .stop { return nil }
        let delta = Int16(header >> 4)
        let id = delta != 0 ? lastFieldIDs[lastFieldIDs.count - 1] &+ delta : Int16(truncatingIfNeeded: try int64())
        lastFieldIDs[lastFieldIDs.count - 1] = id
        return Field(id: id, type: type)
    }

    /// A list's (or set's) element type and count; the count is checked against the bytes left,
    /// each element taking at least one byte (a boolean list's too).
    mutating func listHeader() throws(ParquetError) -> (type: FieldType, count: Int) {
        let header = try byte()
        guard let type = FieldType(rawValue: header & 0x0F) else { throw ParquetError("a list in the metadata has an unknown type") }
        let count = header >> 4 == 0x0F ? try varint() : UInt64(header >> 4)
        guard count <= UInt64(bytes.count - offset) else { throw ParquetError("a list in the metadata is longer than its bytes") }
        return (type, Int(count))
    }

    /// A list of `element`s read one at a time.
    mutating func list<Element>(_ element: (inout ThriftCompactReader) throws(ParquetError) -> Element) throws(ParquetError) -> [Element] {
        let (_, count) = try listHeader()
        var elements: [Element] = []
        elements.reserveCapacity(count)
        for _ in 0..<count { elements.append(try element(&self)) }
        return elements
    }

    /// A struct read by `field`, called for each field it has; fields it does not read are skipped.
    mutating func structure(_ field: (inout ThriftCompactReader, Field) throws(ParquetError) -> Bool) throws(ParquetError) {
        try beginStruct()
        while let next = try self.field() {
            if try !field(&self, next) { try skip(next.type) }
        }
        endStruct()
    }

    /// Skips a value of `type`, whatever it holds.
    mutating func skip(_ type: FieldType, depth: Int = 0) throws(ParquetError) {
        guard depth < Self.maximumDepth else { throw ParquetError("the metadata nests too deep") }
        switch type {
        case .stop, .boolTrue, .boolFalse: return
        case .byte: _ = try byte()
        case .i16, .i32, .i64: _ = try varint()
        case .double: _ = try double()
        case .binary: _ = try binary()
        case .list, .set:
            let (elementType, count) = try listHeader()
            for _ in 0..<count {
                if elementType == .boolTrue || elementType == .boolFalse { _ = try byte() } else { try skip(elementType, depth: depth + 1) }
            }
        case .map:
            let count = try varint()
            guard count <= UInt64(bytes.count - offset) else { throw ParquetError("a map in the metadata is longer than its bytes") }
            guard count > 0 else { return }
            let types = try byte()
            guard let key = FieldType(rawValue: types >> 4), let value = FieldType(rawValue: types & 0x0F) else {
                throw ParquetError("a map in the metadata has an unknown type")
            }
            for _ in 0..<count {
                try skip(key, depth: depth + 1)
                try skip(value, depth: depth + 1)
            }
        case .structure:
            try beginStruct()
            while let next = try field() { try skip(next.type, depth: depth + 1) }
            endStruct()
        }
    }
}

/// What is wrong with a Parquet file, without its name (the reader adds it).
struct ParquetError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
