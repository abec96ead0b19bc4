import Foundation

/// One column chunk of a row group, decoded: its pages read one after another (a dictionary page
/// first when there is one; data pages of version 1 or 2), their levels and values, then put
/// together into one value per row (``values(rows:)``) by the leaf's levels.
struct ParquetColumn {
    let leaf: ParquetSchema.Leaf
    private var definitions: [Int32] = []
    private var repetitions: [Int32] = []
    private var values: [JSONValue] = []
    private var dictionary: [JSONValue]?

    /// Decodes `bytes`, the chunk's pages as stored, compressed with `codec`.
    init(_ bytes: [UInt8], leaf: ParquetSchema.Leaf, codec: ParquetMetadata.Codec, valueCount: Int64) throws(ParquetError) {
        self.leaf = leaf
        var offset = 0
        var read: Int64 = 0
        while read < valueCount, offset < bytes.count {
            let header = try ParquetPageHeader(bytes, offset: &offset)
            let size = Int(header.compressedSize)
            guard bytes.count - offset >= size else {
                throw ParquetError("a page of \(leaf.path.joined(separator: ".")) runs past its chunk")
            }
            let page = bytes[offset..<(offset + size)]
            offset += size
            switch header.kind {
            case .dictionary?:
                let plain = try ParquetCodecs.decompress(page, codec: codec, size: Int(header.uncompressedSize))
                var cursor = 0
                dictionary = try Self.plainValues(plain, cursor: &cursor, count: Int(header.valueCount), leaf: leaf)
            case .data?:
                let plain = try ParquetCodecs.decompress(page, codec: codec, size: Int(header.uncompressedSize))
                try readDataPage(plain, header: header)
                read += Int64(header.valueCount)
            case .dataV2?:
                try readDataPageV2(page, header: header, codec: codec)
                read += Int64(header.valueCount)
            case .index?, nil:
                continue
            }
        }
        guard read == valueCount else {
            throw ParquetError("the column \(leaf.path.joined(separator: ".")) holds \(read) values where its chunk says \(valueCount)")
        }
    }

    /// A version 1 page: repetition levels, definition levels (each RLE with a four-byte length), values.
    private mutating func readDataPage(_ page: [UInt8], header: ParquetPageHeader) throws(ParquetError) {
        let count = Int(header.valueCount)
        var cursor = 0
        func levels(_ maximum: Int, encoding: Int32) throws(ParquetError) -> [Int32] {
            guard maximum > 0 else { return [] }
            guard encoding == ParquetEncodings.rle else { throw ParquetError("levels encoded as \(encoding) (RLE is read)") }
            guard page.count - cursor >= 4 else { throw ParquetError("a page's levels end early") }
            let length = Int(
                UInt32(page[cursor]) | UInt32(page[cursor + 1]) << 8 | UInt32(page[cursor + 2]) << 16 | UInt32(page[cursor + 3]) << 24)
            cursor += 4
            guard page.count - cursor >= length else { throw ParquetError("a page's levels run past it") }
            defer { cursor += length }
            return try ParquetEncodings.hybrid(page[cursor..<(cursor + length)], bitWidth: Self.bitWidth(maximum), count: count)
        }
        let repetition = try levels(leaf.maximumRepetition, encoding: header.repetitionLevelEncoding)
        let definition = try levels(leaf.maximumDefinition, encoding: header.definitionLevelEncoding)
        try append(page, cursor: cursor, header: header, repetition: repetition, definition: definition)
    }

    /// A version 2 page: the levels first, never compressed, then the values, compressed or not.
    private mutating func readDataPageV2(_ page: ArraySlice<UInt8>, header: ParquetPageHeader, codec: ParquetMetadata.Codec)
        throws(ParquetError)
    {
        let count = Int(header.valueCount)
        let repetitionLength = Int(header.repetitionLevelsLength)
        let definitionLength = Int(header.definitionLevelsLength)
        guard repetitionLength >= 0, definitionLength >= 0, repetitionLength + definitionLength <= page.count else {
            throw ParquetError("a page's levels run past it")
        }
        let start = page.startIndex
        let repetition =
            leaf.maximumRepetition > 0
            ? try ParquetEncodings.hybrid(
                page[start..<(start + repetitionLength)], bitWidth: Self.bitWidth(leaf.maximumRepetition), count: count) : []
        let definitionStart = start + repetitionLength
        let definition =
            leaf.maximumDefinition > 0
            ? try ParquetEncodings.hybrid(
                page[definitionStart..<(definitionStart + definitionLength)], bitWidth: Self.bitWidth(leaf.maximumDefinition), count: count)
            : []
        let data = page[(definitionStart + definitionLength)...]
        let valuesSize = Int(header.uncompressedSize) - repetitionLength - definitionLength
        guard valuesSize >= 0 else { throw ParquetError("a page is smaller than its levels") }
        let plain = header.isCompressed ? try ParquetCodecs.decompress(data, codec: codec, size: valuesSize) : Array(data)
        try append(plain, cursor: 0, header: header, repetition: repetition, definition: definition)
    }

    /// Appends a page's levels and its values (one for each definition at the maximum).
    private mutating func append(_ page: [UInt8], cursor: Int, header: ParquetPageHeader, repetition: [Int32], definition: [Int32])
        throws(ParquetError)
    {
        let count = Int(header.valueCount)
        let maximum = Int32(leaf.maximumDefinition)
        let present = maximum > 0 ? definition.reduce(0) { $0 + ($1 == maximum ? 1 : 0) } : count
        var cursor = cursor
        values += try decodeValues(page, cursor: &cursor, count: present, encoding: header.encoding)
        if leaf.maximumDefinition > 0 { definitions += definition }
        if leaf.maximumRepetition > 0 { repetitions += repetition }
    }

    private func decodeValues(_ page: [UInt8], cursor: inout Int, count: Int, encoding: Int32) throws(ParquetError) -> [JSONValue] {
        switch encoding {
        case ParquetEncodings.plain:
            return try Self.plainValues(page, cursor: &cursor, count: count, leaf: leaf)
        case ParquetEncodings.plainDictionary, ParquetEncodings.rleDictionary:
            guard let dictionary else { throw ParquetError("a dictionary-encoded page without a dictionary page") }
            guard count > 0 else { return [] }
            guard cursor < page.count else { throw ParquetError("a dictionary page's indices are missing") }
            let width = Int(page[cursor])
            let indices = try ParquetEncodings.hybrid(page[(cursor + 1)...], bitWidth: width, count: count)
            var values: [JSONValue] = []
            values.reserveCapacity(count)
            for index in indices {
                guard index >= 0, Int(index) < dictionary.count else { throw ParquetError("a dictionary index past the dictionary") }
                values.append(dictionary[Int(index)])
            }
            return values
        case ParquetEncodings.rle where leaf.type == .boolean:
            guard page.count - cursor >= 4 else { throw ParquetError("a boolean run ends early") }
            return try ParquetEncodings.hybrid(page[(cursor + 4)...], bitWidth: 1, count: count).map { .bool($0 != 0) }
        case ParquetEncodings.deltaBinaryPacked where leaf.type == .int32 || leaf.type == .int64:
            return try ParquetEncodings.deltaBinaryPacked(page, offset: &cursor).prefix(count).map { .integer($0) }
        case ParquetEncodings.deltaLengthByteArray where leaf.type == .byteArray:
            return try ParquetEncodings.deltaLengthByteArrays(page, offset: &cursor).prefix(count).map {
                .string(String(decoding: $0, as: UTF8.self))
            }
        case ParquetEncodings.deltaByteArray where leaf.type == .byteArray || leaf.type == .fixedLengthByteArray:
            return try ParquetEncodings.deltaByteArrays(page, offset: &cursor).prefix(count).map {
                .string(String(decoding: $0, as: UTF8.self))
            }
        case ParquetEncodings.byteStreamSplit:
            return try Self.byteStreamSplit(page[cursor...], count: count, leaf: leaf)
        default:
            throw ParquetError("the column \(leaf.path.joined(separator: ".")) has values encoded as \(encoding), which is not read")
        }
    }

    /// `count` PLAIN values of the leaf's type from `cursor`.
    static func plainValues(_ page: [UInt8], cursor: inout Int, count: Int, leaf: ParquetSchema.Leaf) throws(ParquetError) -> [JSONValue] {
        guard count <= ParquetEncodings.maximumValues else { throw ParquetError("a page of \(count) values") }
        var values: [JSONValue] = []
        values.reserveCapacity(min(count, page.count - cursor + 8))
        func fixed(_ width: Int) throws(ParquetError) -> UInt64 {
            guard page.count - cursor >= width else { throw ParquetError("a page's values end early") }
            var bits: UInt64 = 0
            for index in 0..<width { bits |= UInt64(page[cursor + index]) << (8 * UInt64(index)) }
            cursor += width
            return bits
        }
        for index in 0..<count {
            switch leaf.type {
            case .boolean:
                guard cursor + index / 8 < page.count else { throw ParquetError("a page's values end early") }
                values.append(.bool((page[cursor + index / 8] >> UInt8(index % 8)) & 1 == 1))
            case .int32: values.append(.integer(Int64(Int32(truncatingIfNeeded: try fixed(4)))))
            case .int64: values.append(.integer(Int64(bitPattern: try fixed(8))))
            case .float: values.append(.number(Double(Float(bitPattern: UInt32(try fixed(4))))))
            case .double: values.append(.number(Double(bitPattern: try fixed(8))))
            case .int96:
                // An Impala timestamp: nanoseconds of the day, then the Julian day.
                let nanoseconds = Int64(bitPattern: try fixed(8))
                let day = Int64(try fixed(4))
                values.append(.integer((day - 2_440_588) &* 86_400_000_000_000 &+ nanoseconds))
            case .byteArray:
                let length = Int(try fixed(4))
                guard page.count - cursor >= length else { throw ParquetError("a byte array runs past its page") }
                values.append(.string(String(decoding: page[cursor..<(cursor + length)], as: UTF8.self)))
                cursor += length
            case .fixedLengthByteArray:
                let length = leaf.typeLength
                guard length >= 0, page.count - cursor >= length else { throw ParquetError("a fixed-length value runs past its page") }
                values.append(.string(String(decoding: page[cursor..<(cursor + length)], as: UTF8.self)))
                cursor += length
            }
        }
        if leaf.type == .boolean { cursor += (count + 7) / 8 }
        return values
    }

    /// BYTE_STREAM_SPLIT: byte `b` of value `i` at `b * count + i`.
    private static func byteStreamSplit(_ page: ArraySlice<UInt8>, count: Int, leaf: ParquetSchema.Leaf) throws(ParquetError) -> [JSONValue]
    {
        let width: Int
        switch leaf.type {
        case .float, .int32: width = 4
        case .double, .int64: width = 8
        case .fixedLengthByteArray: width = leaf.typeLength
        default: throw ParquetError("BYTE_STREAM_SPLIT on \(leaf.type)")
        }
        guard width > 0, page.count >= width * count else { throw ParquetError("a byte-stream-split page ends early") }
        var joined: [UInt8] = []
        joined.reserveCapacity(width * count)
        let base = page.startIndex
        for index in 0..<count {
            for byte in 0..<width { joined.append(page[base + byte * count + index]) }
        }
        var cursor = 0
        return try plainValues(joined, cursor: &cursor, count: count, leaf: leaf)
    }

    /// The bits a level of at most `maximum` takes.
    static func bitWidth(_ maximum: Int) -> Int {
        maximum == 0 ? 0 : Int.bitWidth - maximum.leadingZeroBitCount
    }

    /// One value per row: a scalar or null, or for a list field its nested arrays (null, empty or
    /// with elements, each element null or a value), as the levels say (Dremel's assembly).
    func values(rows: Int) throws(ParquetError) -> [JSONValue] {
        guard leaf.maximumRepetition > 0 else {
            guard leaf.maximumDefinition > 0 else {
                guard values.count == rows else {
                    throw ParquetError("the column \(leaf.path.joined(separator: ".")) has \(values.count) values for \(rows) rows")
                }
                return values
            }
            guard definitions.count == rows else {
                throw ParquetError("the column \(leaf.path.joined(separator: ".")) has levels for \(definitions.count) of \(rows) rows")
            }
            var next = 0
            return definitions.map { level in
                guard level == Int32(leaf.maximumDefinition) else { return .null }
                defer { next += 1 }
                return values[next]
            }
        }
        guard repetitions.count == definitions.count, repetitions.first ?? 0 == 0 else {
            throw ParquetError("the column \(leaf.path.joined(separator: ".")) has levels that do not start a row")
        }
        var assembly = Assembly(column: self)
        var rowsMade: [JSONValue] = []
        rowsMade.reserveCapacity(rows)
        while assembly.entry < definitions.count { rowsMade.append(try assembly.list(1)) }
        guard rowsMade.count == rows else {
            throw ParquetError("the column \(leaf.path.joined(separator: ".")) has \(rowsMade.count) rows where its row group has \(rows)")
        }
        return rowsMade
    }

    /// Walks the levels of a list column, one entry (a repetition and a definition level, and a
    /// value when the definition is at the maximum) at a time.
    private struct Assembly {
        let column: ParquetColumn
        var entry = 0
        var value = 0

        /// The list at repeated level `level` starting at the current entry.
        mutating func list(_ level: Int) throws(ParquetError) -> JSONValue {
            let bounds = column.leaf.lists[level - 1]
            let definition = Int(column.definitions[entry])
            if definition < bounds.present || definition < bounds.nonEmpty {
                entry += 1
                return definition < bounds.present ? .null : .array([])
            }
            var elements: [JSONValue] = []
            repeat {
                elements.append(try element(level))
            } while entry < column.definitions.count && Int(column.repetitions[entry]) == level
            return .array(elements)
        }

        /// An element of the list at `level`: a deeper list, or the leaf's value or null.
        mutating func element(_ level: Int) throws(ParquetError) -> JSONValue {
            if level < column.leaf.maximumRepetition { return try list(level + 1) }
            let definition = Int(column.definitions[entry])
            entry += 1
            guard definition == column.leaf.maximumDefinition else { return .null }
            guard value < column.values.count else { throw ParquetError("a list column has fewer values than its levels say") }
            defer { value += 1 }
            return column.values[value]
        }
    }
}
