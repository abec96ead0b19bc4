import CSnappy
public import Foundation

/// Writes a dataset shard's records as one Parquet file, the per-shard table img2dataset writes
/// (`NNNNN.parquet`): one row group, a column per record field in the order the fields first
/// appear, every column OPTIONAL, one Snappy-compressed PLAIN data page per column (version 1,
/// definition levels RLE), no statistics. A column's type comes from its values: whole numbers
/// are INT64 (INT32 for the columns named so: img2dataset's `width`, `height`, `original_width`,
/// `original_height`), other numbers DOUBLE, booleans BOOLEAN, text a UTF-8 BYTE_ARRAY; a list
/// or an object (a saved column such as `face_bboxes`) is written as its JSON text, and a column
/// of nulls alone as text.
public enum ParquetTableWriter {
    /// The columns img2dataset's schema makes INT32.
    public static let int32Columns: Set<String> = ["width", "height", "original_width", "original_height"]

    private enum Kind {
        case text, int32, int64, double, boolean

        var physical: ParquetMetadata.PhysicalType {
            switch self {
            case .text: .byteArray
            case .int32: .int32
            case .int64: .int64
            case .double: .double
            case .boolean: .boolean
            }
        }
    }

    /// The Parquet file of `records` (JSON objects; a member a record lacks is null there).
    public static func table(_ records: [JSONValue], int32Columns: Set<String> = int32Columns) -> Data {
        var names: [String] = []
        var seen: Set<String> = []
        for case .object(let members) in records {
            for member in members where seen.insert(member.name).inserted { names.append(member.name) }
        }
        var file: [UInt8] = Array("PAR1".utf8)
        var chunks: [(name: String, kind: Kind, offset: Int, compressed: Int, uncompressed: Int)] = []
        for name in names {
            let values = records.map { $0[name] ?? .null }
            let kind = kind(of: values, int32: int32Columns.contains(name))
            let offset = file.count
            let (bytes, uncompressed) = chunk(values, kind: kind)
            file += bytes
            chunks.append((name, kind, offset, bytes.count, uncompressed))
        }
        var footer = ThriftCompactWriter()
        footer.fields { meta in
            meta.i32(1, 1)
            meta.list(2, of: .structure, count: names.count + 1) { list, index in
                list.element { element in
                    guard index > 0 else {
                        element.string(4, "schema")
                        element.i32(5, Int32(names.count))
                        return
                    }
                    let column = chunks[index - 1]
                    element.i32(1, column.kind.physical.rawValue)
                    element.i32(3, ParquetMetadata.Repetition.optional.rawValue)
                    element.string(4, column.name)
                    if column.kind == .text { element.i32(6, 0) }  // ConvertedType UTF8
                }
            }
            meta.i64(3, Int64(records.count))
            meta.list(4, of: .structure, count: 1) { list, _ in
                list.element { group in
                    group.list(1, of: .structure, count: chunks.count) { columns, index in
                        columns.element { chunk in write(chunks[index], rows: records.count, into: &chunk) }
                    }
                    group.i64(2, Int64(chunks.reduce(0) { $0 + $1.uncompressed }))
                    group.i64(3, Int64(records.count))
                }
            }
            meta.string(6, "swift-web-image")
        }
        file += footer.bytes
        let length = UInt32(footer.bytes.count)
        file += [UInt8(length & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 24)]
        file += Array("PAR1".utf8)
        return Data(file)
    }

    /// A `ColumnChunk` with its `ColumnMetaData`.
    private static func write(
        _ column: (name: String, kind: Kind, offset: Int, compressed: Int, uncompressed: Int), rows: Int,
        into chunk: inout ThriftCompactWriter
    ) {
        chunk.i64(2, 0)
        chunk.structure(3) { meta in
            meta.i32(1, column.kind.physical.rawValue)
            meta.list(2, of: .i32, count: 2) { list, index in list.element(index == 0 ? ParquetEncodings.plain : ParquetEncodings.rle) }
            meta.list(3, of: .binary, count: 1) { list, _ in list.element(column.name) }
            meta.i32(4, ParquetMetadata.Codec.snappy.rawValue)
            meta.i64(5, Int64(rows))
            meta.i64(6, Int64(column.uncompressed))
            meta.i64(7, Int64(column.compressed))
            meta.i64(9, Int64(column.offset))
        }
    }

    private static func kind(of values: [JSONValue], int32: Bool) -> Kind {
        var kinds: Set<String> = []
        for value in values {
            switch value {
            case .null: continue
            case .integer: kinds.insert("integer")
            case .number: kinds.insert("number")
            case .bool: kinds.insert("bool")
            default: kinds.insert("text")
            }
        }
        switch kinds {
        case ["integer"]: return int32 ? .int32 : .int64
        case ["number"], ["integer", "number"]: return .double
        case ["bool"]: return .boolean
        default: return .text
        }
    }

    /// A column's chunk: one page header and its page, and the size the page has uncompressed.
    private static func chunk(_ values: [JSONValue], kind: Kind) -> (bytes: [UInt8], uncompressed: Int) {
        var page = definitionLevels(values.map { $0 != .null })
        page += plainValues(values.filter { $0 != .null }, kind: kind)
        let compressed = snappy(page)
        var header = ThriftCompactWriter()
        header.fields { header in
            header.i32(1, 0)  // DATA_PAGE
            header.i32(2, Int32(page.count))
            header.i32(3, Int32(compressed.count))
            header.structure(5) { data in
                data.i32(1, Int32(values.count))
                data.i32(2, ParquetEncodings.plain)
                data.i32(3, ParquetEncodings.rle)
                data.i32(4, ParquetEncodings.rle)
            }
        }
        return (header.bytes + compressed, header.bytes.count + page.count)
    }

    /// Version 1 definition levels: a four-byte length, then the hybrid encoding as bit-packed
    /// groups of eight one-bit levels.
    private static func definitionLevels(_ present: [Bool]) -> [UInt8] {
        let groups = (present.count + 7) / 8
        var encoded = ThriftCompactWriter()
        encoded.varint(UInt64(groups << 1 | 1))
        var levels = encoded.bytes
        for group in 0..<groups {
            var byte: UInt8 = 0
            for bit in 0..<8 where group * 8 + bit < present.count && present[group * 8 + bit] { byte |= 1 << UInt8(bit) }
            levels.append(byte)
        }
        let length = UInt32(levels.count)
        return [UInt8(length & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 24)] + levels
    }

    private static func plainValues(_ values: [JSONValue], kind: Kind) -> [UInt8] {
        var bytes: [UInt8] = []
        func little<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        switch kind {
        case .boolean:
            bytes = [UInt8](repeating: 0, count: (values.count + 7) / 8)
            for (index, value) in values.enumerated() where value == .bool(true) { bytes[index / 8] |= 1 << UInt8(index % 8) }
        case .int32:
            for case .integer(let value) in values { little(Int32(truncatingIfNeeded: value)) }
        case .int64:
            for case .integer(let value) in values { little(value) }
        case .double:
            for value in values {
                switch value {
                case .number(let number): little(number.bitPattern)
                case .integer(let integer): little(Double(integer).bitPattern)
                default: break
                }
            }
        case .text:
            for value in values {
                let text = Array((value.text ?? "").utf8)
                little(UInt32(text.count))
                bytes += text
            }
        }
        return bytes
    }

    private static func snappy(_ input: [UInt8]) -> [UInt8] {
        var length = snappy_max_compressed_length(input.count)
        var output = [UInt8](repeating: 0, count: length)
        let status = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                source.withMemoryRebound(to: CChar.self) { source in
                    target.withMemoryRebound(to: CChar.self) { snappy_compress(source.baseAddress, source.count, $0.baseAddress, &length) }
                }
            }
        }
        precondition(status == SNAPPY_OK, "snappy_compress failed on a buffer of its own maximum size")
        output.removeLast(output.count - length)
        return output
    }
}
