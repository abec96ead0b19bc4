/// Whether bytes are an SVG document, by imgproxy's rule (`imagetype/svg.go`: the XML tokens in
/// order until a start element whose local name is `svg`): here the first element must be it,
/// so an HTML page with an inline `<svg>` is not an SVG file. Reads at most
/// ``maximumPrologBytes`` before the first element, so a document of comments alone costs little.
enum SVGSniffer {
    /// The most bytes of prolog (declaration, comments, doctype) read before giving up.
    static let maximumPrologBytes = 64 << 10

    static func startsWithSVGElement(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        let end = min(bytes.count, maximumPrologBytes)
        if end >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        while index < end {
            let byte = bytes[index]
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                index += 1
                continue
            }
            guard byte == UInt8(ascii: "<"), index + 1 < end else { return false }
            switch bytes[index + 1] {
            case UInt8(ascii: "?"):
                guard let close = find(bytes, "?>", from: index + 2, end: end) else { return false }
                index = close + 2
            case UInt8(ascii: "!"):
                guard let close = skipMarkupDeclaration(bytes, from: index, end: end) else { return false }
                index = close
            default:
                return elementIsSVG(bytes, nameAt: index + 1, end: bytes.count)
            }
        }
        return false
    }

    /// Past a comment (`<!-- … -->`) or a doctype (`<!DOCTYPE … [ … ]>`); nil when it does not end
    /// within the bytes read.
    private static func skipMarkupDeclaration(_ bytes: UnsafeRawBufferPointer, from start: Int, end: Int) -> Int? {
        if start + 3 < end, bytes[start + 2] == UInt8(ascii: "-"), bytes[start + 3] == UInt8(ascii: "-") {
            return find(bytes, "-->", from: start + 4, end: end).map { $0 + 3 }
        }
        var depth = 0
        var index = start + 2
        while index < end {
            switch bytes[index] {
            case UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "]"): depth -= 1
            case UInt8(ascii: ">") where depth <= 0: return index + 1
            default: break
            }
            index += 1
        }
        return nil
    }

    /// Whether the element name at `start` has the local name `svg` (a prefix before `:` aside),
    /// followed by white space, `/`, `>` or the end of the bytes.
    private static func elementIsSVG(_ bytes: UnsafeRawBufferPointer, nameAt start: Int, end: Int) -> Bool {
        var index = start
        var localStart = start
        while index < end {
            let byte = bytes[index]
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == UInt8(ascii: "/") || byte == UInt8(ascii: ">") {
                break
            }
            if byte == UInt8(ascii: ":") { localStart = index + 1 }
            index += 1
        }
        let name: [UInt8] = Array("svg".utf8)
        guard index - localStart == name.count, index > start else { return false }
        return (0..<name.count).allSatisfy { bytes[localStart + $0] == name[$0] }
    }

    private static func find(_ bytes: UnsafeRawBufferPointer, _ needle: StaticString, from start: Int, end: Int) -> Int? {
        let length = needle.utf8CodeUnitCount
        guard end - start >= length else { return nil }
        let pattern = UnsafeRawBufferPointer(start: needle.utf8Start, count: length)
        return (start...(end - length)).first { offset in (0..<length).allSatisfy { bytes[offset + $0] == pattern[$0] } }
    }
}
