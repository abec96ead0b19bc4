import Foundation

/// Reads a list of any of the ``ListFormat``s row by row, a block of the file at a time: memory
/// stays flat in the list's length, each byte is scanned once, and a record past
/// ``maximumRecordBytes`` becomes a row with an error rather than a buffer of its size. A
/// Parquet list (a file, found by its magic bytes whatever `format` says, or a folder of
/// `.parquet` files) is read a row group at a time, only the columns the run reads.
public final class SampleListReader {
    /// The text list's bytes; nil for a Parquet list.
    private let bytes: ListBytes?
    private let parquet: ParquetRows?
    private let format: ListFormat
    private let columns: ListColumns
    private var buffer: [UInt8] = []
    private var start = 0
    /// How far past `start` the current line has been searched for its end already: a refill
    /// resumes there rather than from the line's start (which made a 20 MB line cost 13.9 s).
    private var scanned = 0
    private var atEnd = false
    /// The header of a CSV or TSV list, read from its first record.
    private var header: [String]?
    private var headerIndex: [String: Int] = [:]
    private var delimited: DelimitedRecords?
    private var insideArray = false
    /// The 1-based line (txt, jsonl) or record (csv, tsv) or element (json) or row (parquet) last
    /// read, for errors.
    public private(set) var position = 0

    /// Opens `path` (or standard input for `-`) as a list of `format`, reading `columns`.
    /// - Throws: ``DatasetError`` when the file cannot be read.
    public init(path: String, format: ListFormat, columns: ListColumns) throws(DatasetError) {
        self.columns = columns
        if format == .parquet || ParquetRows.isParquet(path: path) {
            let wanted = [columns.url] + [columns.caption, columns.hash].compactMap { $0 } + columns.additional
            let rows = try ParquetRows(path: path, wanted: wanted)
            (parquet, bytes, self.format, header) = (rows, nil, .parquet, rows.names)
            try checkColumns { rows.names.contains($0) }
            return
        }
        (parquet, bytes) = (nil, try ListBytes(path: path))
        self.format = format
        if format == .csv || format == .tsv {
            delimited = DelimitedRecords(separator: format == .csv ? UInt8(ascii: ",") : UInt8(ascii: "\t"))
        }
    }

    /// Whether `path` is a Parquet list: a folder holding `.parquet` files, or a file that starts
    /// with Parquet's magic bytes, whatever its name.
    public static func isParquet(path: String) -> Bool {
        ParquetRows.isParquet(path: path)
    }

    /// The next row, or nil at the end of the list. A list that cannot be read at all (no
    /// header, no URL column, broken JSON) is an error naming the place.
    /// - Throws: ``DatasetError`` naming the place.
    public func next() throws(DatasetError) -> ListRow? {
        switch format {
        case .txt: return try nextText()
        case .jsonl: return try nextJSONLine()
        case .json: return try nextArrayElement()
        case .csv, .tsv: return try nextRecord()
        case .parquet:
            guard let values = try parquet?.next() else { return nil }
            position += 1
            return row { values[$0] }
        }
    }

    // MARK: - Lines

    /// The most bytes one record (a line, a CSV or TSV record, a JSON array's element) may hold.
    /// A longer one is read past, not kept: a row of its own with a clear error (a JSON array's
    /// element, which cannot be skipped without parsing it, stops the list). LAION's and
    /// DataComp's rows are a few hundred bytes; a gzip list's expansion is bounded by it too.
    public static let maximumRecordBytes = 1 << 20

    /// A line of the list: its bytes, or the start of one too long to keep.
    private enum Line {
        case whole(ArraySlice<UInt8>)
        case tooLong(prefix: [UInt8])
    }

    /// The next line without its end, or nil at the end of the input. Each byte is searched for
    /// the end of its line once.
    private func nextLine() throws(DatasetError) -> Line? {
        var longPrefix: [UInt8]?
        while true {
            if let newline = buffer[(start + scanned)...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[start..<newline]
                start = newline + 1
                scanned = 0
                position += 1
                if let longPrefix { return .tooLong(prefix: longPrefix) }
                return .whole(line.last == UInt8(ascii: "\r") ? line.dropLast() : line)
            }
            if atEnd {
                guard start < buffer.count || longPrefix != nil else { return nil }
                let line = buffer[start...]
                start = buffer.count
                scanned = 0
                position += 1
                if let longPrefix { return .tooLong(prefix: longPrefix) }
                return .whole(line)
            }
            if buffer.count - start > Self.maximumRecordBytes {
                // Keep the start (the row's URL, cut), drop the rest as it comes.
                if longPrefix == nil { longPrefix = Array(buffer[start..<(start + ListRow.maximumShownURLBytes)]) }
                start = buffer.count
            }
            scanned = buffer.count - start
            try refill()
        }
    }

    /// Reads another block, dropping what was consumed.
    private func refill() throws(DatasetError) {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        if let block = try bytes?.next() { buffer += block } else { atEnd = true }
    }

    /// The row of a line too long to read: its URL is the line's start (cut), and its error says why.
    private func tooLong(_ prefix: [UInt8], what: String) -> ListRow {
        var row = ListRow(url: String(decoding: prefix.prefix(ListRow.maximumShownURLBytes), as: UTF8.self))
        row.malformed = "\(what) \(position) is longer than the \(Self.maximumRecordBytes >> 20) MiB a record may hold"
        return row
    }

    /// The next line's row, read by `read` (nil skips the line), or the row of a line too long
    /// to read; nil at the end of the list.
    private func nextLineRow(_ read: (ArraySlice<UInt8>) throws(DatasetError) -> ListRow?) throws(DatasetError) -> ListRow? {
        while let next = try nextLine() {
            switch next {
            case .tooLong(let prefix): return tooLong(prefix, what: "line")
            case .whole(let line): if let row = try read(line) { return row }
            }
        }
        return nil
    }

    private func nextText() throws(DatasetError) -> ListRow? {
        try nextLineRow { line in
            let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespaces)
            return text.isEmpty || text.hasPrefix("#") ? nil : ListRow(url: text)
        }
    }

    private func nextJSONLine() throws(DatasetError) -> ListRow? {
        try nextLineRow { line throws(DatasetError) in
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return nil }
            let value: JSONValue
            do {
                value = try JSONParser.parse(Array(line))
            } catch {
                throw DatasetError("line \(position) of the list is not JSON: \(error)")
            }
            return try row(from: value)
        }
    }

    // MARK: - A JSON array

    /// The elements of a top-level array, one at a time: an element cut by the end of a block
    /// is parsed again once more bytes are in.
    private func nextArrayElement() throws(DatasetError) -> ListRow? {
        while true {
            var parser = JSONParser(buffer, offset: start)
            let element: JSONValue?
            do throws(JSONParser.Failure) {
                element = try nextElement(&parser)
            } catch {
                guard error.incomplete, !atEnd else {
                    throw DatasetError("the json list is not JSON: \(error.reason) (element \(position + 1))")
                }
                guard buffer.count - start <= Self.maximumRecordBytes else {
                    throw DatasetError(
                        "element \(position + 1) of the json list is longer than the \(Self.maximumRecordBytes >> 20) MiB a record may hold"
                    )
                }
                try refill()
                continue
            }
            guard let element else { return nil }
            return try row(from: element)
        }
    }

    /// The next element of the array at the parser, past the `[` or the `,` before it; nil at its
    /// `]`. The reader's place moves past what was read whole.
    private func nextElement(_ parser: inout JSONParser) throws(JSONParser.Failure) -> JSONValue? {
        if !insideArray {
            guard let first = parser.peek() else { throw parser.failure("the text ended early", incomplete: true) }
            guard first == UInt8(ascii: "[") else { throw parser.failure("a json list is an array of objects: it starts with '['") }
            parser.advance()
            insideArray = true
            start = parser.offset
            if parser.peek() == UInt8(ascii: "]") { return arrayEnd(after: &parser) }
        } else if position > 0 {
            switch parser.peek() {
            case UInt8(ascii: ","): parser.advance()
            case UInt8(ascii: "]"): return arrayEnd(after: &parser)
            case nil: throw parser.failure("the text ended early", incomplete: true)
            default: throw parser.failure("',' or ']' expected between the array's elements")
            }
        }
        let value = try parser.value()
        start = parser.offset
        position += 1
        return value
    }

    private func arrayEnd(after parser: inout JSONParser) -> JSONValue? {
        parser.advance()
        start = parser.offset
        return nil
    }

    // MARK: - CSV and TSV

    private func nextRecord() throws(DatasetError) -> ListRow? {
        guard delimited != nil else { return nil }
        while true {
            if let record = try delimited?.next(in: buffer, from: &start, atEnd: atEnd) {
                position += 1
                guard case .fields(let fields) = record else {
                    if case .tooLong(let prefix) = record {
                        if header == nil { throw DatasetError("the list's header is longer than \(Self.maximumRecordBytes >> 20) MiB") }
                        return tooLong(prefix, what: "record")
                    }
                    continue
                }
                guard let header else {
                    try readHeader(fields)
                    continue
                }
                if fields.count == 1, fields[0].isEmpty { continue }
                var row = self.row { name in headerIndex[name].flatMap { $0 < fields.count ? JSONValue.string(fields[$0]) : nil } }
                if fields.count != header.count {
                    row.malformed = "record \(position) has \(fields.count) fields where the header has \(header.count)"
                }
                return row
            }
            if atEnd {
                if header == nil { throw DatasetError("the list is empty: a \(format.rawValue) list starts with a header row") }
                return nil
            }
            try refill()
        }
    }

    private func readHeader(_ fields: [String]) throws(DatasetError) {
        var names = fields
        if let first = names.first, first.hasPrefix("\u{FEFF}") { names[0] = String(first.dropFirst()) }
        header = names
        for (index, name) in names.enumerated() where headerIndex[name] == nil { headerIndex[name] = index }
        try checkColumns { headerIndex[$0] != nil }
    }

    /// Fails at once when a column the run reads is not in the list, as img2dataset does.
    private func checkColumns(_ has: (String) -> Bool) throws(DatasetError) {
        let wanted = [columns.url] + [columns.caption, columns.hash].compactMap { $0 } + columns.additional
        let missing = wanted.filter { !has($0) }
        guard missing.isEmpty else {
            throw DatasetError(
                "the list has no column \(missing.map { "\"\($0)\"" }.joined(separator: ", ")) (its columns: \((header ?? []).joined(separator: ", ")))"
            )
        }
    }

    // MARK: - Rows

    private func row(from value: JSONValue) throws(DatasetError) -> ListRow {
        guard case .object = value else { throw DatasetError("row \(position) of the list is not a JSON object") }
        return row { value[$0] }
    }

    /// A row from a column lookup (nil for a column the row lacks).
    private func row(_ column: (String) -> JSONValue?) -> ListRow {
        var row = ListRow(url: column(columns.url)?.text ?? "")
        row.url = row.url.trimmingCharacters(in: .whitespaces)
        if let caption = columns.caption { row.caption = column(caption)?.text }
        if let hash = columns.hash { row.expectedHash = column(hash)?.text }
        row.columns = columns.additional.map { JSONValue.Member(name: $0, value: column($0) ?? .null) }
        return row
    }
}
