/// Percent-encoding as SigV4 defines it (RFC 3986's unreserved characters `A-Z a-z 0-9 - . _ ~`
/// kept, every other byte of the UTF-8 as `%XX` in upper case): the one encoding both the
/// canonical request and the URL sent use, so that they never disagree.
public enum AWSPercentEncoding {
    /// `value` with every byte but the unreserved ones encoded (a query name or value).
    public static func encode(_ value: some StringProtocol) -> String {
        encode(value, keepingSlash: false)
    }

    /// A path: each segment encoded once, the `/` between them kept (S3's rule; other services
    /// encode twice and normalise, which S3 must not: its keys may hold `//` and `..`).
    public static func path(_ path: String) -> String {
        let encoded = encode(path, keepingSlash: true)
        return encoded.hasPrefix("/") ? encoded : "/" + encoded
    }

    /// The canonical query: each name and value encoded, sorted by name then value, joined
    /// with `&`; an empty value keeps its `=`.
    public static func canonicalQuery(_ items: [(name: String, value: String)]) -> String {
        items.map { (encode($0.name), encode($0.value)) }
            .sorted {
                $0.0 == $1.0 ? Array($0.1.utf8).lexicographicallyPrecedes($1.1.utf8) : Array($0.0.utf8).lexicographicallyPrecedes($1.0.utf8)
            }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }

    /// `value` with `%XX` sequences decoded (a query taken apart, an S3 listing's
    /// `encoding-type=url` keys); nil when a sequence is malformed or the bytes are not UTF-8.
    public static func decode(_ value: some StringProtocol, plusIsSpace: Bool = false) -> String? {
        var bytes = [UInt8]()
        var iterator = Array(value.utf8).makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+") where plusIsSpace:
                bytes.append(UInt8(ascii: " "))
            default:
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func encode(_ value: some StringProtocol, keepingSlash: Bool) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out = [UInt8]()
        out.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            if isUnreserved(byte) || (keepingSlash && byte == UInt8(ascii: "/")) {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
