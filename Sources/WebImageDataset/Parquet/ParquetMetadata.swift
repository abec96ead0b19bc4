/// What a Parquet file's footer says, as far as a list reader needs it (Apache Parquet's
/// `parquet.thrift`: `FileMetaData`, `SchemaElement`, `RowGroup`, `ColumnChunk`,
/// `ColumnMetaData`; field ids as the specification numbers them). Statistics, indexes, Bloom
/// filters and key-value metadata are skipped.
struct ParquetMetadata {
    /// `Type`: the physical types.
    enum PhysicalType: Int32 {
        case boolean = 0
        case int32 = 1
        case int64 = 2
        case int96 = 3
        case float = 4
        case double = 5
        case byteArray = 6
        case fixedLengthByteArray = 7
    }

    /// `FieldRepetitionType`.
    enum Repetition: Int32 {
        case required = 0
        case optional = 1
        case repeated = 2
    }

    /// `CompressionCodec`, the ones read here.
    enum Codec: Int32 {
        case uncompressed = 0
        case snappy = 1
        case gzip = 2
        case lzo = 3
        case brotli = 4
        case lz4 = 5
        case zstd = 6
        case lz4Raw = 7
    }

    /// `SchemaElement`: a node of the schema tree, listed depth first.
    struct SchemaElement {
        var type: PhysicalType?
        var typeLength: Int32?
        var repetition: Repetition?
        var name = ""
        var childCount: Int32?
    }

    /// `ColumnMetaData` of one column chunk.
    struct ColumnChunk {
        var type: PhysicalType = .boolean
        var path: [String] = []
        var codec: Codec = .uncompressed
        var valueCount: Int64 = 0
        var compressedSize: Int64 = 0
        var dataPageOffset: Int64 = 0
        var dictionaryPageOffset: Int64?

        /// Where its pages start: the dictionary page's offset when there is one (some writers
        /// wrote 0 for none), else the first data page's.
        var start: Int64 {
            if let dictionaryPageOffset, dictionaryPageOffset > 0, dictionaryPageOffset < dataPageOffset { return dictionaryPageOffset }
            return dataPageOffset
        }
    }

    struct RowGroup {
        var columns: [ColumnChunk] = []
        var rowCount: Int64 = 0
    }

    var schema: [SchemaElement] = []
    var rowCount: Int64 = 0
    var rowGroups: [RowGroup] = []

    /// Reads a `FileMetaData` struct.
    init(_ bytes: [UInt8]) throws(ParquetError) {
        var reader = ThriftCompactReader(bytes)
        var schema: [SchemaElement] = []
        var rowCount: Int64 = 0
        var rowGroups: [RowGroup] = []
        try reader.structure { reader, field throws(ParquetError) in
            switch (field.id, field.type) {
            case (2, .list): schema = try reader.list { reader throws(ParquetError) in try Self.schemaElement(&reader) }
            case (3, .i64): rowCount = try reader.int64()
            case (4, .list): rowGroups = try reader.list { reader throws(ParquetError) in try Self.rowGroup(&reader) }
            default: return false
            }
            return true
        }
        guard !schema.isEmpty else { throw ParquetError("its metadata has no schema") }
        self.schema = schema
        self.rowCount = rowCount
        self.rowGroups = rowGroups
    }

    private static func schemaElement(_ reader: inout ThriftCompactReader) throws(ParquetError) -> SchemaElement {
        var element = SchemaElement()
        try reader.structure { reader, field throws(ParquetError) in
            switch (field.id, field.type) {
            case (1, .i32): element.type = PhysicalType(rawValue: try reader.int32())
            case (2, .i32): element.typeLength = try reader.int32()
            case (3, .i32): element.repetition = Repetition(rawValue: try reader.int32())
            case (4, .binary): element.name = try reader.string()
            case (5, .i32): element.childCount = try reader.int32()
            default: return false
            }
            return true
        }
        return element
    }

    private static func rowGroup(_ reader: inout ThriftCompactReader) throws(ParquetError) -> RowGroup {
        var group = RowGroup()
        try reader.structure { reader, field throws(ParquetError) in
            switch (field.id, field.type) {
            case (1, .list): group.columns = try reader.list { reader throws(ParquetError) in try Self.columnChunk(&reader) }
            case (3, .i64): group.rowCount = try reader.int64()
            default: return false
            }
            return true
        }
        return group
    }

    /// A `ColumnChunk`, whose `meta_data` (field 3) holds what is read.
    private static func columnChunk(_ reader: inout ThriftCompactReader) throws(ParquetError) -> ColumnChunk {
        var chunk: ColumnChunk?
        try reader.structure { reader, field throws(ParquetError) in
            guard field.id == 3, field.type == .structure else { return false }
            chunk = try columnMetadata(&reader)
            return true
        }
        guard let chunk else { throw ParquetError("a column chunk has no metadata (an encrypted file?)") }
        return chunk
    }

    private static func columnMetadata(_ reader: inout ThriftCompactReader) throws(ParquetError) -> ColumnChunk {
        var chunk = ColumnChunk()
        var type: PhysicalType?
        var codec: Codec?
        try reader.structure { reader, field throws(ParquetError) in
            switch (field.id, field.type) {
            case (1, .i32): type = PhysicalType(rawValue: try reader.int32())
            case (3, .list): chunk.path = try reader.list { reader throws(ParquetError) in try reader.string() }
            case (4, .i32): codec = Codec(rawValue: try reader.int32())
            case (5, .i64): chunk.valueCount = try reader.int64()
            case (7, .i64): chunk.compressedSize = try reader.int64()
            case (9, .i64): chunk.dataPageOffset = try reader.int64()
            case (11, .i64): chunk.dictionaryPageOffset = try reader.int64()
            default: return false
            }
            return true
        }
        guard let type else { throw ParquetError("a column chunk of \(chunk.path.joined(separator: ".")) has an unknown type") }
        guard let codec else { throw ParquetError("a column chunk of \(chunk.path.joined(separator: ".")) has an unknown codec") }
        chunk.type = type
        chunk.codec = codec
        return chunk
    }
}

/// `PageHeader`, and the header of the page it announces.
struct ParquetPageHeader {
    enum Kind: Int32 {
        case data = 0
        case index = 1
        case dictionary = 2
        case dataV2 = 3
    }

    var kind: Kind?
    var uncompressedSize: Int32 = 0
    var compressedSize: Int32 = 0
    /// Values in the page, nulls included (a dictionary page's entries).
    var valueCount: Int32 = 0
    /// The values' encoding.
    var encoding: Int32 = 0
    /// Version 1: the levels' encoding (RLE is the one writers use).
    var definitionLevelEncoding: Int32 = 3
    var repetitionLevelEncoding: Int32 = 3
    /// Version 2: the levels' byte lengths, before the values, never compressed.
    var definitionLevelsLength: Int32 = 0
    var repetitionLevelsLength: Int32 = 0
    var isCompressed = true

    /// Reads a header at `offset` of `bytes`, moving `offset` past it.
    init(_ bytes: [UInt8], offset: inout Int) throws(ParquetError) {
        var reader = ThriftCompactReader(bytes, offset: offset)
        var header = Self()
        try reader.structure { reader, field throws(ParquetError) in
            switch (field.id, field.type) {
            case (1, .i32): header.kind = Kind(rawValue: try reader.int32())
            case (2, .i32): header.uncompressedSize = try reader.int32()
            case (3, .i32): header.compressedSize = try reader.int32()
            case (5, .structure): try header.readDataV1(&reader)
            case (7, .structure): try header.readDictionary(&reader)
            case (8, .structure): try header.readDataV2(&reader)
            default: return false
            }
            return true
        }
        guard header.uncompressedSize >= 0, header.compressedSize >= 0, header.valueCount >= 0 else {
            throw ParquetError("a page header has a negative size")
        }
        self = header
        offset = reader.offset
    }

    private init() {}

    private mutating func readDataV1(_ reader: inout ThriftCompactReader) throws(ParquetError) {
        try reader.structure { reader, field throws(ParquetError) in
            switch (field.id, field.type) {
            case (1, .i32): valueCount = try reader.int32()
            case (2, .i32): encoding = try reader.int32()
            case (3, .i32): definitionLevelEncoding = try reader.int32()
            case (4, .i32): repetitionLevelEncoding = try reader.int32()
            default: return false
            }
            return true
        }
    }

    private mutating func readDictionary(_ reader: inout ThriftCompactReader) throws(ParquetError) {
        try reader.structure { reader, field throws(ParquetError) in
            switch (field.id, field.type) {
            case (1, .i32): valueCount = try reader.int32()
            case (2, .i32): encoding = try reader.int32()
            default: return false
            }
            return true
        }
    }

    private mutating func readDataV2(_ reader: inout ThriftCompactReader) throws(ParquetError) {
        try reader.structure { reader, field throws(ParquetError) in
            switch (field.id, field.type) {
            case (1, .i32): valueCount = try reader.int32()
            case (4, .i32): encoding = try reader.int32()
            case (5, .i32): definitionLevelsLength = try reader.int32()
            case (6, .i32): repetitionLevelsLength = try reader.int32()
            case (7, .boolTrue): isCompressed = true
            case (7, .boolFalse): isCompressed = false
            default: return false
            }
            return true
        }
    }
}
