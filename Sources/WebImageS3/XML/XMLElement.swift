import Foundation
import WebImageCore

/// An element of the small XML documents S3 answers with (`ListBucketResult`, `Error`,
/// `InitiateMultipartUploadResult`...): its local name (no namespace prefix), its children and
/// its text. Attributes are read past and dropped: no S3 answer this client reads needs one.
struct S3XMLElement: Sendable, Equatable {
    var name: String
    var children: [S3XMLElement] = []
    var text = ""

    /// The first child named `name`.
    func child(_ name: String) -> S3XMLElement? {
        children.first { $0.name == name }
    }

    /// The text of the first child named `name`.
    subscript(_ name: String) -> String? {
        child(name)?.text
    }

    /// Every child named `name`, in order.
    func children(_ name: String) -> [S3XMLElement] {
        children.filter { $0.name == name }
    }
}

/// A reader for those documents: elements, text, the five named entities and numeric
/// references, CDATA, comments and the `<?xml?>` declaration. A `<!DOCTYPE` is refused (S3
/// never sends one, and refusing it rules out entity expansion), as are more than 64 levels of
/// nesting, and any malformed input, with a `badServerResponse` error saying where.
struct S3XMLReader {
    private let bytes: [UInt8]
    private var index = 0
    private static let maximumDepth = 64

    private init(_ data: Data) {
        bytes = Array(data)
    }

    /// The document's root element.
    static func parse(_ data: Data) throws(WebImageError) -> S3XMLElement {
        var reader = S3XMLReader(data)
        try reader.skipMisc()
        guard reader.peek == UInt8(ascii: "<") else { throw reader.failure("no root element") }
        let root = try reader.element(depth: 0)
        try reader.skipMisc()
        guard reader.index == reader.bytes.count else { throw reader.failure("content after the root element") }
        return root
    }

    private var peek: UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private func failure(_ reason: String) -> WebImageError {
        WebImageError(.badServerResponse, "malformed XML from the S3 server: \(reason) at byte \(index)")
    }

    private func starts(with text: String) -> Bool {
        let utf8 = Array(text.utf8)
        return bytes.count - index >= utf8.count && bytes[index..<index + utf8.count].elementsEqual(utf8)
    }

    /// Moves past `terminator`, which must come; returns what was before it.
    private mutating func take(until terminator: String) throws(WebImageError) -> ArraySlice<UInt8> {
        let start = index
        while index < bytes.count {
            if starts(with: terminator) {
                defer { index += terminator.utf8.count }
                return bytes[start..<index]
            }
            index += 1
        }
        throw failure("\(terminator) never came")
    }

    /// White space, comments and processing instructions between elements; a DOCTYPE is refused.
    private mutating func skipMisc() throws(WebImageError) {
        while let byte = peek {
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                index += 1
            } else if starts(with: "<?") {
                _ = try take(until: "?>")
            } else if starts(with: "<!--") {
                _ = try take(until: "-->")
            } else if starts(with: "<!") {
                throw failure("a DOCTYPE or declaration, which S3 never sends")
            } else {
                return
            }
        }
    }

    private mutating func element(depth: Int) throws(WebImageError) -> S3XMLElement {
        guard depth < Self.maximumDepth else { throw failure("more than \(Self.maximumDepth) levels of nesting") }
        index += 1  // "<"
        let qualified = name()
        guard !qualified.isEmpty else { throw failure("an element without a name") }
        var element = S3XMLElement(name: Self.localName(qualified))
        if try skipAttributes() { return element }
        var text = [UInt8]()
        while true {
            guard let byte = peek else { throw failure("<\(qualified)> is not closed") }
            if byte != UInt8(ascii: "<") {
                text += try characterData()
            } else if starts(with: "</") {
                index += 2
                guard name() == qualified else { throw failure("</...> does not close <\(qualified)>") }
                skipSpace()
                guard peek == UInt8(ascii: ">") else { throw failure("a closing tag without >") }
                index += 1
                guard let string = String(validating: text, as: UTF8.self) else { throw failure("text that is not UTF-8") }
                element.text = string
                return element
            } else if starts(with: "<![CDATA[") {
                index += 9
                text += try take(until: "]]>")
            } else if starts(with: "<!--") {
                _ = try take(until: "-->")
            } else if starts(with: "<?") {
                _ = try take(until: "?>")
            } else if starts(with: "<!") {
                throw failure("a declaration inside an element")
            } else {
                element.children.append(try self.element(depth: depth + 1))
            }
        }
    }

    /// Reads past the attributes to the tag's end; true for an empty element (`/>`).
    private mutating func skipAttributes() throws(WebImageError) -> Bool {
        while let byte = peek {
            switch byte {
            case UInt8(ascii: ">"):
                index += 1
                return false
            case UInt8(ascii: "/"):
                guard index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: ">") else { throw failure("/ inside a tag") }
                index += 2
                return true
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                index += 1
                _ = try take(until: byte == UInt8(ascii: "\"") ? "\"" : "'")
            case UInt8(ascii: "<"):
                throw failure("< inside a tag")
            default:
                index += 1
            }
        }
        throw failure("a tag that never ends")
    }

    private mutating func name() -> String {
        let start = index
        while let byte = peek,
            !(byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/"))
        {
            index += 1
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func skipSpace() {
        while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    /// Text up to the next `<`, with entity and character references replaced.
    private mutating func characterData() throws(WebImageError) -> [UInt8] {
        var out = [UInt8]()
        while let byte = peek, byte != UInt8(ascii: "<") {
            if byte == UInt8(ascii: "&") {
                index += 1
                let reference = String(decoding: try take(until: ";"), as: UTF8.self)
                guard let resolved = Self.resolve(reference) else { throw failure("an unknown reference &\(reference.prefix(16));") }
                out += resolved
            } else {
                out.append(byte)
                index += 1
            }
        }
        return out
    }

    private static func resolve(_ reference: String) -> [UInt8]? {
        switch reference {
        case "lt": return [UInt8(ascii: "<")]
        case "gt": return [UInt8(ascii: ">")]
        case "amp": return [UInt8(ascii: "&")]
        case "quot": return [UInt8(ascii: "\"")]
        case "apos": return [UInt8(ascii: "'")]
        default:
            guard reference.hasPrefix("#") else { return nil }
            let digits = reference.dropFirst()
            let value = digits.hasPrefix("x") ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
            guard let value, let scalar = Unicode.Scalar(value) else { return nil }
            return Array(String(Character(scalar)).utf8)
        }
    }

    private static func localName(_ qualified: String) -> String {
        qualified.split(separator: ":").last.map(String.init) ?? qualified
    }
}
