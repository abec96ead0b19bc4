/// Writes Thrift's compact protocol, for a Parquet file's footer and page headers: the mirror
/// of ``ThriftCompactReader`` (field ids as deltas within a struct, zigzag varints).
struct ThriftCompactWriter {
    private(set) var bytes: [UInt8] = []
    private var lastFieldIDs: [Int16] = [0]

    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    private mutating func zigzag(_ value: Int64) {
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    private mutating func header(_ id: Int16, _ type: ThriftCompactReader.FieldType) {
        let delta = id - lastFieldIDs[lastFieldIDs.count - 1]
        if delta > 0, delta <= 15 {
            bytes.append(UInt8(delta) << 4 | type.rawValue)
        } else {
            bytes.append(type.rawValue)
            zigzag(Int64(id))
        }
        lastFieldIDs[lastFieldIDs.count - 1] = id
    }

    mutating func i32(_ id: Int16, _ value: Int32) {
        header(id, .i32)
        zigzag(Int64(value))
    }

    mutating func i64(_ id: Int16, _ value: Int64) {
        header(id, .i64)
        zigzag(value)
    }

    mutating func string(_ id: Int16, _ value: String) {
        header(id, .binary)
        varint(UInt64(value.utf8.count))
        bytes += value.utf8
    }

    /// A struct field whose fields `body` writes.
    mutating func structure(_ id: Int16, _ body: (inout ThriftCompactWriter) -> Void) {
        header(id, .structure)
        fields(body)
    }

    /// The fields of a struct and its stop byte (the top-level struct is written with this).
    mutating func fields(_ body: (inout ThriftCompactWriter) -> Void) {
        lastFieldIDs.append(0)
        body(&self)
        bytes.append(0)
        lastFieldIDs.removeLast()
    }

    /// A list field of `count` elements of `type`, each written by `element`.
    mutating func list(_ id: Int16, of type: ThriftCompactReader.FieldType, count: Int, _ element: (inout ThriftCompactWriter, Int) -> Void)
    {
        header(id, .list)
        if count < 15 {
            bytes.append(UInt8(count) << 4 | type.rawValue)
        } else {
            bytes.append(0xF0 | type.rawValue)
            varint(UInt64(count))
        }
        for index in 0..<count { element(&self, index) }
    }

    /// An element of an `i32` list.
    mutating func element(_ value: Int32) {
        zigzag(Int64(value))
    }

    /// An element of a `binary` list.
    mutating func element(_ value: String) {
        varint(UInt64(value.utf8.count))
        bytes += value.utf8
    }

    /// An element of a struct list, its fields written by `body`.
    mutating func element(_ body: (inout ThriftCompactWriter) -> Void) {
        fields(body)
    }
}
