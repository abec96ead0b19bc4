import Foundation

/// One entry of a list: the URL and what goes with it into its sample.
struct ListRow: Equatable, Sendable {
    /// The image's URL as written in the list (empty when its column is empty or missing).
    var url: String
    /// The caption, when the list has a caption column (`--caption-col`).
    var caption: String?
    /// The hash to check the downloaded bytes against (`--verify-hash COLUMN`).
    var expectedHash: String?
    /// The columns `--save-additional-columns` keeps, in the order it names them.
    var columns: [JSONValue.Member] = []
    /// Why the row cannot be read (a CSV row with the wrong number of fields); it is then
    /// recorded as a failure, never dropped.
    var malformed: String?

    /// The most of a URL a message or a cut row shows, in bytes.
    static let maximumShownURLBytes = 2048
}

/// The list formats `--input-format` takes, as img2dataset names them (a `.gz` suffix is
/// accepted too; gzip is found by its bytes either way).
enum ListFormat: String, CaseIterable {
    case txt, csv, tsv, jsonl, json

    init?(name: String) {
        let trimmed = name.hasSuffix(".gz") ? String(name.dropLast(3)) : name
        self.init(rawValue: trimmed.lowercased())
    }

    static let names = "txt, csv, tsv, jsonl or json (gzip-compressed too)"
}

/// Which columns of a list a run reads (img2dataset's `--url_col`, `--caption_col`,
/// `--save_additional_columns`, `--verify_hash`).
struct ListColumns: Equatable, Sendable {
    var url = "url"
    var caption: String?
    var hash: String?
    var additional: [String] = []
}

/// Reads a list of any of the ``ListFormat``s row by row, a block of the file at a time.
final class SampleListReader {
    private let bytes: ListBytes
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
    /// The 1-based line (txt, jsonl) or record (csv, tsv) or element (json) last read, for errors.
    private(set) var position = 0

    init(path: String, format: ListFormat, columns: ListColumns) throws {
        bytes = try ListBytes(path: path)
        self.format = format
        self.columns = columns
        if format == .csv || format == .tsv {
            delimited = DelimitedRecords(separator: format == .csv ? UInt8(ascii: ",") : UInt8(ascii: "\t"))
        }
    }

    /// The next row, or nil at the end of the list. A list that cannot be read at all (no
    /// header, no URL column, broken JSON) is an error naming the place.
    func next() throws -> ListRow? {
        switch format {
        case .txt: return try nextText()
        case .jsonl: return try nextJSONLine()
        case .json: return try nextArrayElement()
        case .csv, .tsv: return try nextRecord()
        }
    }

    // MARK: - Lines

    /// The most bytes one record (a line, a CSV or TSV record, a JSON array's element) may hold.
    /// A longer one is read past, not kept: a row of its own with a clear error (a JSON array's
    /// element, which cannot be skipped without parsing it, stops the list). LAION's and
    /// DataComp's rows are a few hundred bytes; a gzip list's expansion is bounded by it too.
    static let maximumRecordBytes = 1 << 20

    /// A line of the list: its bytes, or the start of one too long to keep.
    private enum Line {
        case whole(ArraySlice<UInt8>)
        case tooLong(prefix: [UInt8])
    }

    /// The next line without its end, or nil at the end of the input. Each byte is searched for
    /// the end of its line once.
    private func nextLine() throws -> Line? {
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
    private func refill() throws {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        if let block = try bytes.next() { buffer += block } else { atEnd = true }
    }

    /// The row of a line too long to read: its URL is the line's start (cut), and its error says why.
    private func tooLong(_ prefix: [UInt8], what: String) -> ListRow {
        var row = ListRow(url: String(decoding: prefix.prefix(ListRow.maximumShownURLBytes), as: UTF8.self))
        row.malformed = "\(what) \(position) is longer than the \(Self.maximumRecordBytes >> 20) MiB a record may hold"
        return row
    }

    private func nextText() throws -> ListRow? {
        while let next = try nextLine() {
            guard case .whole(let line) = next else {
                if case .tooLong(let prefix) = next { return tooLong(prefix, what: "line") }
                continue
            }
            let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespaces)
            if text.isEmpty || text.hasPrefix("#") { continue }
            return ListRow(url: text)
        }
        return nil
    }

    private func nextJSONLine() throws -> ListRow? {
        while let next = try nextLine() {
            guard case .whole(let line) = next else {
                if case .tooLong(let prefix) = next { return tooLong(prefix, what: "line") }
                continue
            }
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            let value: JSONValue
            do {
                value = try JSONParser.parse(Array(line))
            } catch {
                throw CommandFailure("line \(position) of the list is not JSON: \(error)")
            }
            return try row(from: value)
        }
        return nil
    }

    // MARK: - A JSON array

    /// The elements of a top-level array, one at a time: an element cut by the end of a block
    /// is parsed again once more bytes are in.
    private func nextArrayElement() throws -> ListRow? {
        while true {
            var parser = JSONParser(buffer, offset: start)
            do {
                if !insideArray {
                    guard let first = parser.peek() else { throw parser.failure("the text ended early", incomplete: true) }
                    guard first == UInt8(ascii: "[") else { throw CommandFailure("a json list is an array of objects: it starts with '['") }
                    parser.advance()
                    insideArray = true
                    start = parser.offset
                    if parser.peek() == UInt8(ascii: "]") { return try arrayEnd(after: &parser) }
                } else if position > 0 {
                    switch parser.peek() {
                    case UInt8(ascii: ","): parser.advance()
                    case UInt8(ascii: "]"): return try arrayEnd(after: &parser)
                    case nil: throw parser.failure("the text ended early", incomplete: true)
                    default: throw parser.failure("',' or ']' expected between the array's elements")
                    }
                }
                let value = try parser.value()
                start = parser.offset
                position += 1
                return try row(from: value)
            } catch let failure as JSONParser.Failure {
                guard failure.incomplete, !atEnd else {
                    throw CommandFailure("the json list is not JSON: \(failure.reason) (element \(position + 1))")
                }
                guard buffer.count - start <= Self.maximumRecordBytes else {
                    throw CommandFailure(
                        "element \(position + 1) of the json list is longer than the \(Self.maximumRecordBytes >> 20) MiB a record may hold"
                    )
                }
                try refill()
            }
        }
    }

    private func arrayEnd(after parser: inout JSONParser) throws -> ListRow? {
        parser.advance()
        start = parser.offset
        return nil
    }

    // MARK: - CSV and TSV

    private func nextRecord() throws -> ListRow? {
        guard delimited != nil else { return nil }
        while true {
            if let record = try delimited?.next(in: buffer, from: &start, atEnd: atEnd) {
                position += 1
                guard case .fields(let fields) = record else {
                    if case .tooLong(let prefix) = record {
                        if header == nil { throw CommandFailure("the list's header is longer than \(Self.maximumRecordBytes >> 20) MiB") }
                        return tooLong(prefix, what: "record")
                    }
                    continue
                }
                guard let header else {
                    try readHeader(fields)
                    continue
                }
                if fields.count == 1, fields[0].isEmpty { continue }
                var row = try self.row { name in headerIndex[name].flatMap { $0 < fields.count ? JSONValue.string(fields[$0]) : nil } }
                if fields.count != header.count {
                    row.malformed = "record \(position) has \(fields.count) fields where the header has \(header.count)"
                }
                return row
            }
            if atEnd {
                if header == nil { throw CommandFailure("the list is empty: a \(format.rawValue) list starts with a header row") }
                return nil
            }
            try refill()
        }
    }

    private func readHeader(_ fields: [String]) throws {
        var names = fields
        if let first = names.first, first.hasPrefix("\u{FEFF}") { names[0] = String(first.dropFirst()) }
        header = names
        for (index, name) in names.enumerated() where headerIndex[name] == nil { headerIndex[name] = index }
        try checkColumns { headerIndex[$0] != nil }
    }

    /// Fails at once when a column the run reads is not in the list, as img2dataset does.
    private func checkColumns(_ has: (String) -> Bool) throws {
        let wanted = [columns.url] + [columns.caption, columns.hash].compactMap { $0 } + columns.additional
        let missing = wanted.filter { !has($0) }
        guard missing.isEmpty else {
            throw CommandFailure(
                "the list has no column \(missing.map { "\"\($0)\"" }.joined(separator: ", ")) (its columns: \((header ?? []).joined(separator: ", ")))"
            )
        }
    }

    // MARK: - Rows

    private func row(from value: JSONValue) throws -> ListRow {
        guard case .object = value else { throw CommandFailure("row \(position) of the list is not a JSON object") }
        return try row { value[$0] }
    }

    /// A row from a column lookup (nil for a column the row lacks).
    private func row(_ column: (String) -> JSONValue?) throws -> ListRow {
        var row = ListRow(url: column(columns.url)?.text ?? "")
        row.url = row.url.trimmingCharacters(in: .whitespaces)
        if let caption = columns.caption { row.caption = column(caption)?.text }
        if let hash = columns.hash { row.expectedHash = column(hash)?.text }
        row.columns = columns.additional.map { JSONValue.Member(name: $0, value: column($0) ?? .null) }
        return row
    }
}

/// Splits CSV (RFC 4180) or TSV text into records: quoted fields may hold the separator, quotes
/// written twice and line breaks; a quote inside an unquoted field is kept as it is, as Python's
/// `csv` and pyarrow read it. Fields are UTF-8 text. A record cut by the end of the bytes read so
/// far is kept as far as it was read and goes on where it stopped when more come, so each byte is
/// read once; one longer than ``SampleListReader/maximumRecordBytes`` is read past to its end.
struct DelimitedRecords {
    let separator: UInt8

    /// A record: its fields, or the start of one too long to keep.
    enum Record {
        case fields([String])
        case tooLong(prefix: [UInt8])
    }

    /// The record read so far, when the bytes ended inside it.
    private var fields: [String] = []
    private var field: [UInt8] = []
    private var quoted = false
    private var fieldStart = true
    /// How far past the record's start it has been read.
    private var consumed = 0
    /// The record's first bytes, once it is too long to keep.
    private var longPrefix: [UInt8]?

    init(separator: UInt8) {
        self.separator = separator
    }

    /// The record starting at `start` in `buffer`, moving `start` past it; nil when the buffer
    /// ends inside it and more bytes may come (`atEnd` false): the next call, with the bytes that
    /// followed appended, goes on from there. A quoted field still open at the end of the input
    /// is an error.
    mutating func next(in buffer: [UInt8], from start: inout Int, atEnd: Bool) throws -> Record? {
        var index = start + consumed
        while index < buffer.count {
            let byte = buffer[index]
            if quoted {
                if byte == UInt8(ascii: "\"") {
                    if index + 1 < buffer.count, buffer[index + 1] == UInt8(ascii: "\"") {
                        append(byte)
                        index += 2
                        continue
                    }
                    if index + 1 == buffer.count, !atEnd { return pause(at: index, in: buffer, start: &start) }
                    quoted = false
                } else {
                    append(byte)
                }
                index += 1
                continue
            }
            switch byte {
            case UInt8(ascii: "\"") where fieldStart:
                quoted = true
                fieldStart = false
            case separator:
                endField()
                fieldStart = true
            case UInt8(ascii: "\n"):
                if field.last == UInt8(ascii: "\r") { field.removeLast() }
                endField()
                start = index + 1
                return finished()
            default:
                append(byte)
                fieldStart = false
            }
            index += 1
        }
        guard atEnd else { return pause(at: index, in: buffer, start: &start) }
        if quoted { throw CommandFailure("the list ends inside a quoted field (a quote left open)") }
        guard index > start || longPrefix != nil else { return nil }
        if field.last == UInt8(ascii: "\r") { field.removeLast() }
        endField()
        start = index
        return finished()
    }

    private mutating func append(_ byte: UInt8) {
        if longPrefix == nil { field.append(byte) }
    }

    private mutating func endField() {
        if longPrefix == nil { fields.append(String(decoding: field, as: UTF8.self)) }
        field.removeAll(keepingCapacity: true)
    }

    /// The bytes ended inside a record at `index`: what was read is kept for the next call. Past
    /// the record limit the fields read are dropped (the first bytes kept as its URL) and the
    /// buffer's bytes consumed, so that the reader does not hold the record.
    private mutating func pause(at index: Int, in buffer: [UInt8], start: inout Int) -> Record? {
        consumed = index - start
        if longPrefix == nil, consumed > SampleListReader.maximumRecordBytes {
            longPrefix = Array(buffer[start..<(start + ListRow.maximumShownURLBytes)])
            fields.removeAll()
            field.removeAll()
        }
        if longPrefix != nil {
            start = index
            consumed = 0
        }
        return nil
    }

    private mutating func finished() -> Record {
        defer {
            fields = []
            quoted = false
            fieldStart = true
            consumed = 0
            longPrefix = nil
        }
        if let longPrefix { return .tooLong(prefix: longPrefix) }
        return .fields(fields)
    }
}
