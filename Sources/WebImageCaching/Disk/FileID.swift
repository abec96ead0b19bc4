import Crypto

/// The SHA-256 of a cache key: what a disk cache names and indexes an entry by.
struct FileID: Hashable, Sendable {
    let words: (UInt64, UInt64, UInt64, UInt64)

    init(key: String) {
        let digest = SHA256.hash(data: Array(key.utf8))
        words = digest.withUnsafeBytes { bytes in
            (
                bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self), bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self), bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
            )
        }
    }

    init?(bytes: UnsafeRawBufferPointer) {
        guard bytes.count == 32 else { return nil }
        words = (
            bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self), bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
            bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self), bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
        )
    }

    /// Parses 64 lowercase hex digits.
    init?(hex: Substring) {
        let digits = Array(hex.utf8)
        guard digits.count == 64 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 32)
        for index in 0..<32 {
            guard let high = Self.nibble(digits[2 * index]), let low = Self.nibble(digits[2 * index + 1]) else { return nil }
            bytes[index] = high << 4 | low
        }
        guard let parsed = bytes.withUnsafeBytes({ FileID(bytes: $0) }) else { return nil }
        self = parsed
    }

    /// The 32 digest bytes.
    var bytes: [UInt8] {
        withUnsafeBytes(of: words) { Array($0) }
    }

    /// 64 lowercase hex digits.
    var hex: String {
        bytes.lowercaseHex
    }

    static func == (lhs: FileID, rhs: FileID) -> Bool {
        lhs.words == rhs.words
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
    }

    /// SHA-256 bits are already uniform: a `Dictionary` can use them as they are, mixed with its
    /// seed, instead of hashing them again.
    func _rawHashValue(seed: Int) -> Int {
        Int(truncatingIfNeeded: words.0) ^ seed
    }

    /// Whether `text` is two lowercase hex digits: a fan-out folder's name.
    static func isHexByte(_ text: String) -> Bool {
        text.utf8.count == 2 && text.utf8.allSatisfy { nibble($0) != nil }
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
