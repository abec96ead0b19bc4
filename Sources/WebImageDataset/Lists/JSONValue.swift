public import Foundation

/// A JSON value that keeps what a dataset's records need and Foundation's `JSONSerialization`
/// loses: the order of an object's members (img2dataset writes its fields in a fixed order) and
/// whole numbers as whole numbers (a `width` column stays `640`, not `640.0`).
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([Member])

    /// A member of an object, in the order it was written.
    public struct Member: Equatable, Sendable {
        public var name: String
        public var value: JSONValue

        /// A member called `name` holding `value`.
        public init(name: String, value: JSONValue) {
            self.name = name
            self.value = value
        }
    }

    /// The value as text for a column that holds one (a URL, a caption, a hash): a string as it
    /// is, a number or boolean as JSON writes it, nil for null.
    public var text: String? {
        switch self {
        case .null: nil
        case .string(let text): text
        default: serialized()
        }
    }

    /// The member called `name` of an object.
    public subscript(name: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.name == name }?.value
    }

    // MARK: - Writing

    /// The value as JSON text: compact with `indent` nil (`{"a": 1, "b": 2}`, Python's
    /// separators, as img2dataset's parquet and our `.jsonl` lines), else one member per line
    /// indented by that many spaces, as Python's `json.dumps(meta, indent=4)` writes each
    /// sample's `KEY.json`.
    /// `asciiOnly` escapes every character past ASCII as `\uXXXX`, as Python's `json.dumps`
    /// writes by default.
    public func serialized(indent: Int? = nil, asciiOnly: Bool = false) -> String {
        var output = ""
        write(into: &output, indent: indent, depth: 0, asciiOnly: asciiOnly)
        return output
    }

    private func write(into output: inout String, indent: Int?, depth: Int, asciiOnly: Bool = false) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .integer(let value): output += String(value)
        case .number(let value): output += Self.format(value)
        case .string(let value): Self.quote(value, into: &output, asciiOnly: asciiOnly)
        case .array(let values):
            writeContainer(into: &output, open: "[", close: "]", count: values.count, indent: indent, depth: depth) { index, output in
                values[index].write(into: &output, indent: indent, depth: depth + 1, asciiOnly: asciiOnly)
            }
        case .object(let members):
            writeContainer(into: &output, open: "{", close: "}", count: members.count, indent: indent, depth: depth) { index, output in
                Self.quote(members[index].name, into: &output, asciiOnly: asciiOnly)
                output += ": "
                members[index].value.write(into: &output, indent: indent, depth: depth + 1, asciiOnly: asciiOnly)
            }
        }
    }

    private func writeContainer(
        into output: inout String, open: String, close: String, count: Int, indent: Int?, depth: Int,
        element: (Int, inout String) -> Void
    ) {
        output += open
        guard count > 0 else {
            output += close
            return
        }
        for index in 0..<count {
            if index > 0 { output += indent == nil ? ", " : "," }
            if let indent { output += "\n" + String(repeating: " ", count: indent * (depth + 1)) }
            element(index, &output)
        }
        if let indent { output += "\n" + String(repeating: " ", count: indent * depth) }
        output += close
    }

    /// A double as Python's `repr` writes it where JSON allows: whole values keep `.0`.
    private static func format(_ value: Double) -> String {
        value.isFinite ? "\(value)" : "null"
    }

    private static func quote(_ text: String, into output: inout String, asciiOnly: Bool) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20:
                output += "\\u" + String(scalar.value, radix: 16).leftPadded(to: 4)
            case _ where asciiOnly && scalar.value > 0x7F:
                for unit in String(scalar).utf16 { output += "\\u" + String(unit, radix: 16).leftPadded(to: 4) }
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}

/// Reads JSON text byte by byte into ``JSONValue``s: one value from a line of JSON Lines, or
/// the elements of a top-level array one at a time (``JSONArrayReader``).
struct JSONParser {
    /// Why the text is not JSON, with the byte offset where that shows.
    struct Failure: Error, CustomStringConvertible {
        let offset: Int
        let reason: String
        /// True when the text ended inside a value: more bytes could complete it.
        let incomplete: Bool
        var description: String { "\(reason) at byte \(offset)" }
    }

    /// Deeper nesting than this is refused rather than recursed into (a hostile list).
    static let maximumDepth = 256

    private let bytes: [UInt8]
    private(set) var offset: Int

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    /// One whole JSON text: a value with nothing but white space around it.
    static func parse(_ bytes: [UInt8]) throws(Failure) -> JSONValue {
        var parser = JSONParser(bytes)
        let value = try parser.value()
        parser.skipSpace()
        guard parser.offset == bytes.count else { throw parser.failure("text after the value") }
        return value
    }

    mutating func skipSpace() {
        while offset < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[offset]) { offset += 1 }
    }

    /// The byte at the cursor after white space, if any.
    mutating func peek() -> UInt8? {
        skipSpace()
        return offset < bytes.count ? bytes[offset] : nil
    }

    mutating func advance() { offset += 1 }

    func failure(_ reason: String, incomplete: Bool = false) -> Failure {
        Failure(offset: offset, reason: reason, incomplete: incomplete || offset >= bytes.count)
    }

    /// The value at the cursor.
    mutating func value(depth: Int = 0) throws(Failure) -> JSONValue {
        guard depth < Self.maximumDepth else { throw failure("nesting deeper than \(Self.maximumDepth)") }
        guard let byte = peek() else { throw failure("a value expected", incomplete: true) }
        switch byte {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("unexpected character '\(Character(Unicode.Scalar(byte)))'")
        }
    }

    private mutating func literal(_ word: String, _ value: JSONValue) throws(Failure) -> JSONValue {
        for expected in word.utf8 {
            guard offset < bytes.count else { throw failure("\(word) cut short", incomplete: true) }
            guard bytes[offset] == expected else { throw failure("not \(word)") }
            offset += 1
        }
        return value
    }

    private mutating func object(depth: Int) throws(Failure) -> JSONValue {
        advance()
        var members: [JSONValue.Member] = []
        if peek() == UInt8(ascii: "}") {
            advance()
            return .object(members)
        }
        while true {
            guard peek() == UInt8(ascii: "\"") else { throw failure("a member name expected") }
            let name = try string()
            guard peek() == UInt8(ascii: ":") else { throw failure("':' expected after a member name") }
            advance()
            members.append(.init(name: name, value: try value(depth: depth + 1)))
            switch peek() {
            case UInt8(ascii: ","): advance()
            case UInt8(ascii: "}"):
                advance()
                return .object(members)
            default: throw failure("',' or '}' expected in an object")
            }
        }
    }

    private mutating func array(depth: Int) throws(Failure) -> JSONValue {
        advance()
        var values: [JSONValue] = []
        if peek() == UInt8(ascii: "]") {
            advance()
            return .array(values)
        }
        while true {
            values.append(try value(depth: depth + 1))
            switch peek() {
            case UInt8(ascii: ","): advance()
            case UInt8(ascii: "]"):
                advance()
                return .array(values)
            default: throw failure("',' or ']' expected in an array")
            }
        }
    }

    private mutating func number() throws(Failure) -> JSONValue {
        let start = offset
        var whole = true
        if bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        while offset < bytes.count {
            let byte = bytes[offset]
            if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                offset += 1
            } else if [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "+"), UInt8(ascii: "-")].contains(byte) {
                whole = false
                offset += 1
            } else {
                break
            }
        }
        let text = String(decoding: bytes[start..<offset], as: UTF8.self)
        if whole, let integer = Int64(text) { return .integer(integer) }
        guard let double = Double(text), text.last.map({ $0.isNumber }) == true else {
            throw failure("malformed number \(text)", incomplete: offset >= bytes.count)
        }
        return .number(double)
    }

    private mutating func string() throws(Failure) -> String {
        advance()
        var scalars = String.UnicodeScalarView()
        var run = offset
        func flush(_ end: Int) {
            scalars.append(contentsOf: String(decoding: bytes[run..<end], as: UTF8.self).unicodeScalars)
        }
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                flush(offset)
                offset += 1
                return String(scalars)
            }
            if byte < 0x20 { throw failure("a control character inside a string") }
            guard byte == UInt8(ascii: "\\") else {
                offset += 1
                continue
            }
            flush(offset)
            offset += 1
            guard offset < bytes.count else { break }
            let escaped = bytes[offset]
            offset += 1
            switch escaped {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"): scalars.append(try unicodeEscape())
            default: throw failure("unknown escape \\\(Character(Unicode.Scalar(escaped)))")
            }
            run = offset
        }
        throw failure("a string without its closing quote", incomplete: true)
    }

    /// `\uXXXX`, with a surrogate pair read as one scalar; a lone surrogate becomes U+FFFD, as
    /// Python reads it into a string that cannot be encoded.
    private mutating func unicodeEscape() throws(Failure) -> Unicode.Scalar {
        let high = try hex4()
        if (0xD800..<0xDC00).contains(high), offset + 1 < bytes.count, bytes[offset] == UInt8(ascii: "\\"),
            bytes[offset + 1] == UInt8(ascii: "u")
        {
            let saved = offset
            offset += 2
            let low = try hex4()
            if (0xDC00..<0xE000).contains(low) {
                return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)) ?? "\u{FFFD}"
            }
            offset = saved
        }
        return Unicode.Scalar(high) ?? "\u{FFFD}"
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard offset + 4 <= bytes.count else { throw failure("\\u escape cut short", incomplete: true) }
        guard let value = UInt32(String(decoding: bytes[offset..<offset + 4], as: UTF8.self), radix: 16) else {
            throw failure("malformed \\u escape")
        }
        offset += 4
        return value
    }
}
