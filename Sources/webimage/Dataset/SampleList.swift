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

    /// The next line without its end, or nil at the end of the input.
    private func nextLine() throws -> ArraySlice<UInt8>? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[start..<newline]
                start = newline + 1
                position += 1
                return line.last == UInt8(ascii: "\r") ? line.dropLast() : line
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                let line = buffer[start...]
                start = buffer.count
                position += 1
                return line
            }
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

    private func nextText() throws -> ListRow? {
        while let line = try nextLine() {
            let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespaces)
            if text.isEmpty || text.hasPrefix("#") { continue }
            return ListRow(url: text)
        }
        return nil
    }

    private func nextJSONLine() throws -> ListRow? {
        while let line = try nextLine() {
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
        guard let delimited else { return nil }
        while true {
            if let fields = try delimited.next(in: buffer, from: &start, atEnd: atEnd) {
                position += 1
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
/// `csv` and pyarrow read it. Fields are UTF-8 text.
struct DelimitedRecords {
    let separator: UInt8

    /// The record starting at `start` in `buffer`, moving `start` past it; nil when the buffer
    /// ends inside it and more bytes may come (`atEnd` false). A quoted field still open at the
    /// end of the input is an error.
    func next(in buffer: [UInt8], from start: inout Int, atEnd: Bool) throws -> [String]? {
        var fields: [String] = []
        var field: [UInt8] = []
        var index = start
        var quoted = false
        var fieldStart = true
        while index < buffer.count {
            let byte = buffer[index]
            if quoted {
                if byte == UInt8(ascii: "\"") {
                    if index + 1 < buffer.count, buffer[index + 1] == UInt8(ascii: "\"") {
                        field.append(byte)
                        index += 2
                        continue
                    }
                    if index + 1 == buffer.count, !atEnd { return nil }
                    quoted = false
                } else {
                    field.append(byte)
                }
                index += 1
                continue
            }
            switch byte {
            case UInt8(ascii: "\"") where fieldStart:
                quoted = true
                fieldStart = false
            case separator:
                fields.append(String(decoding: field, as: UTF8.self))
                field.removeAll(keepingCapacity: true)
                fieldStart = true
            case UInt8(ascii: "\n"):
                if field.last == UInt8(ascii: "\r") { field.removeLast() }
                fields.append(String(decoding: field, as: UTF8.self))
                start = index + 1
                return fields
            default:
                field.append(byte)
                fieldStart = false
            }
            index += 1
        }
        guard atEnd else { return nil }
        if quoted { throw CommandFailure("the list ends inside a quoted field (a quote left open)") }
        guard index > start else { return nil }
        if field.last == UInt8(ascii: "\r") { field.removeLast() }
        fields.append(String(decoding: field, as: UTF8.self))
        start = index
        return fields
    }
}
