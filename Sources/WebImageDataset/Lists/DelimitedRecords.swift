import Foundation

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
    mutating func next(in buffer: [UInt8], from start: inout Int, atEnd: Bool) throws(DatasetError) -> Record? {
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
        if quoted { throw DatasetError("the list ends inside a quoted field (a quote left open)") }
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
