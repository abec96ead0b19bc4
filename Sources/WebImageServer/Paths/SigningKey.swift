/// One key and salt pair for URL signatures, given as hex as imgproxy takes them
/// (`IMGPROXY_KEY`, `IMGPROXY_SALT`).
public struct SigningKey: Sendable, Hashable {
    /// The HMAC key.
    public let key: [UInt8]
    /// The bytes put before the path.
    public let salt: [UInt8]

    /// A pair from bytes.
    public init(key: [UInt8], salt: [UInt8]) {
        self.key = key
        self.salt = salt
    }

    /// A pair from hex text; nil when either is empty or not hex.
    public init?(hexKey: String, hexSalt: String) {
        guard let key = Self.bytes(hex: hexKey), let salt = Self.bytes(hex: hexSalt), !key.isEmpty else { return nil }
        self.init(key: key, salt: salt)
    }

    /// The bytes a hex string spells; nil for an odd length or a non-hex digit.
    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
