import CSnappy
public import Foundation

/// Writes a dataset shard's records as one Parquet file, the per-shard table img2dataset writes
/// (`NNNNN.parquet`): one row group, a column per record field in the order the fields first
/// appear, every column OPTIONAL, one Snappy-compressed PLAIN data page per column (version 1,
/// definition levels RLE), no statistics. A column's type comes from its values: whole numbers
/// are INT64 (INT32 for the columns named so: img2dataset's `width`, `height`, `original_width`,
/// `original_height`), other numbers DOUBLE, booleans BOOLEAN, text a UTF-8 BYTE_ARRAY; a list
/// or an object (a saved column such as `face_bboxes`) is written as its JSON text, and a column
/// of nulls alone as text. A file can also begin with a ``ParquetStreamedColumn``'s pages (the
/// images of img2dataset's `parquet` output), written as they came; ``rest(of:after:int32Columns:)``
/// then completes it.
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

    /// A column chunk as the footer describes it.
    private struct Chunk {
        var name: String
        var physical: ParquetMetadata.PhysicalType
        /// Annotated as UTF-8 text (ConvertedType UTF8).
        var isText: Bool
        var codec: ParquetMetadata.Codec
        var offset: Int
        var compressed: Int
        var uncompressed: Int
    }

    /// The Parquet file of `records` (JSON objects; a member a record lacks is null there).
    public static func table(_ records: [JSONValue], int32Columns: Set<String> = int32Columns) -> Data {
        Data(Array("PAR1".utf8) + columnsAndFooter(records, offset: 4, streamed: nil, int32Columns: int32Columns))
    }

    /// The rest of a file whose first bytes are `streamed`'s (its head and pages): the columns of
    /// `records`, one per row `streamed` has, then the footer, which lists `streamed` last.
    public static func rest(
        of records: [JSONValue], after streamed: ParquetStreamedColumn, int32Columns: Set<String> = int32Columns
    ) -> Data {
        precondition(records.count == streamed.rows, "a record for each row of the streamed column")
        return Data(columnsAndFooter(records, offset: streamed.fileLength, streamed: streamed, int32Columns: int32Columns))
    }

    private static func columnsAndFooter(
        _ records: [JSONValue], offset: Int, streamed: ParquetStreamedColumn?, int32Columns: Set<String>
    ) -> [UInt8] {
        var names: [String] = []
        var seen: Set<String> = streamed.map { [$0.name] } ?? []
        for case .object(let members) in records {
            for member in members where seen.insert(member.name).inserted { names.append(member.name) }
        }
        var file: [UInt8] = []
        var chunks: [Chunk] = []
        for name in names {
            let values = records.map { $0[name] ?? .null }
            let kind = kind(of: values, int32: int32Columns.contains(name))
            let (bytes, uncompressed) = chunk(values, kind: kind)
            chunks.append(
                Chunk(
                    name: name, physical: kind.physical, isText: kind == .text, codec: .snappy, offset: offset + file.count,
                    compressed: bytes.count, uncompressed: uncompressed))
            file += bytes
        }
        if let streamed {
            chunks.append(
                Chunk(
                    name: streamed.name, physical: .byteArray, isText: false, codec: .uncompressed, offset: 4,
                    compressed: streamed.fileLength - 4, uncompressed: streamed.fileLength - 4))
        }
        let footer = footer(chunks, rows: records.count)
        let length = UInt32(footer.count)
        return file + footer + [UInt8(length & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 24)]
            + Array("PAR1".utf8)
    }

    /// The `FileMetaData`: a flat schema of OPTIONAL columns and one row group.
    private static func footer(_ chunks: [Chunk], rows: Int) -> [UInt8] {
        var footer = ThriftCompactWriter()
        footer.fields { meta in
            meta.i32(1, 1)
            meta.list(2, of: .structure, count: chunks.count + 1) { list, index in
                list.element { element in
                    guard index > 0 else {
                        element.string(4, "schema")
                        element.i32(5, Int32(chunks.count))
                        return
                    }
                    let column = chunks[index - 1]
                    element.i32(1, column.physical.rawValue)
                    element.i32(3, ParquetMetadata.Repetition.optional.rawValue)
                    element.string(4, column.name)
                    if column.isText { element.i32(6, 0) }  // ConvertedType UTF8
                }
            }
            meta.i64(3, Int64(rows))
            meta.list(4, of: .structure, count: 1) { list, _ in
                list.element { group in
                    group.list(1, of: .structure, count: chunks.count) { columns, index in
                        columns.element { chunk in write(chunks[index], rows: rows, into: &chunk) }
                    }
                    group.i64(2, Int64(chunks.reduce(0) { $0 + $1.uncompressed }))
                    group.i64(3, Int64(rows))
                }
            }
            meta.string(6, "swift-web-image")
        }
        return footer.bytes
    }

    /// A `ColumnChunk` with its `ColumnMetaData`.
    private static func write(_ column: Chunk, rows: Int, into chunk: inout ThriftCompactWriter) {
        chunk.i64(2, Int64(column.offset))
        chunk.structure(3) { meta in
            meta.i32(1, column.physical.rawValue)
            meta.list(2, of: .i32, count: 2) { list, index in list.element(index == 0 ? ParquetEncodings.plain : ParquetEncodings.rle) }
            meta.list(3, of: .binary, count: 1) { list, _ in list.element(column.name) }
            meta.i32(4, column.codec.rawValue)
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
        let header = pageHeader(values: values.count, size: page.count, compressed: compressed.count)
        return (header + compressed, header.count + page.count)
    }

    /// A version 1 `DATA_PAGE`'s header: PLAIN values, RLE levels.
    static func pageHeader(values: Int, size: Int, compressed: Int) -> [UInt8] {
        var header = ThriftCompactWriter()
        header.fields { header in
            header.i32(1, 0)  // DATA_PAGE
            header.i32(2, Int32(size))
            header.i32(3, Int32(compressed))
            header.structure(5) { data in
                data.i32(1, Int32(values))
                data.i32(2, ParquetEncodings.plain)
                data.i32(3, ParquetEncodings.rle)
                data.i32(4, ParquetEncodings.rle)
            }
        }
        return header.bytes
    }

    /// Version 1 definition levels: a four-byte length, then the hybrid encoding as bit-packed
    /// groups of eight one-bit levels.
    static func definitionLevels(_ present: [Bool]) -> [UInt8] {
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

/// A BYTE_ARRAY column written as its rows come, ahead of a table's other columns: the image
/// column of img2dataset's `parquet` output, whose bytes are too many to hold until the shard
/// ends. Each row is a page of its own (uncompressed: the images are compressed already), to be
/// appended to the file after ``head`` and the earlier pages; ``ParquetTableWriter/rest(of:after:int32Columns:)``
/// then gives the file's other columns and its footer. (Column chunks may lie anywhere in a
/// file: the footer holds their offsets, so this one can come first though the schema lists it
/// last, where img2dataset puts it.)
public struct ParquetStreamedColumn: Sendable {
    /// The column's name.
    public let name: String
    /// The length of the file so far: the head and the pages made.
    public private(set) var fileLength = 4
    /// The rows (pages) made so far.
    public private(set) var rows = 0

    /// A column named `name` with no rows yet.
    public init(name: String) {
        self.name = name
    }

    /// The file's first bytes, before the first page (Parquet's magic).
    public static var head: Data { Data("PAR1".utf8) }

    /// The next row's page, holding `value` (nil for a null).
    public mutating func page(_ value: Data?) -> Data {
        var page = ParquetTableWriter.definitionLevels([value != nil])
        if let value {
            let length = UInt32(value.count)
            page += [UInt8(length & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 24)]
        }
        var bytes = Data(
            ParquetTableWriter.pageHeader(values: 1, size: page.count + (value?.count ?? 0), compressed: page.count + (value?.count ?? 0)))
        bytes.append(contentsOf: page)
        if let value { bytes.append(value) }
        fileLength += bytes.count
        rows += 1
        return bytes
    }
}
