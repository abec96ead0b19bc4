import Crypto
import Foundation

/// imgproxy's URL signature: `base64url_nopad(HMAC-SHA256(key, salt + path))` over the path after
/// the signature segment (leading `/` included), optionally cut to its first
/// ``signatureSize`` bytes. Several pairs can be active at once, so keys rotate without
/// breaking the URLs already out there: a signature made with any of them is accepted.
public struct URLSigner: Sendable {
    /// The pairs accepted; the first one signs.
    public let keys: [SigningKey]
    /// How many bytes of the digest a signature keeps, 1...32. Default 32 (imgproxy's
    /// `IMGPROXY_SIGNATURE_SIZE`).
    public let signatureSize: Int

    /// A signer over `keys` (at least one).
    public init(keys: [SigningKey], signatureSize: Int = 32) {
        precondition(!keys.isEmpty, "a signer needs a key")
        self.keys = keys
        self.signatureSize = min(32, max(1, signatureSize))
    }

    /// The signature of `path` (what follows the signature segment, starting with `/`) with the
    /// first key.
    public func signature(for path: String) -> String {
        Self.base64URL(digest(path, with: keys[0]))
    }

    /// `/signature/path`: the path signed with the first key.
    public func sign(_ path: String) -> String {
        "/" + signature(for: path) + path
    }

    /// Whether `signature` signs `path` under any of the keys. Every key is tried and compared
    /// in constant time, so the time taken says nothing about how much of a guess was right.
    /// Only the canonical spelling is valid (no padding, no stray bits in the last character):
    /// `SIG=` or another last character decoding to the same bytes would be a new cache key in
    /// every cache in front for the same image.
    public func isValid(_ signature: Substring, for path: Substring) -> Bool {
        guard let given = Self.bytes(base64URL: signature), given.count == signatureSize, Self.base64URL(given) == signature
        else { return false }
        var matched = false
        for key in keys {
            let expected = digest(path, with: key)
            var difference: UInt8 = 0
            for index in 0..<signatureSize { difference |= expected[index] ^ given[index] }
            matched = matched || difference == 0
        }
        return matched
    }

    private func digest(_ path: some StringProtocol, with key: SigningKey) -> [UInt8] {
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: key.key))
        hmac.update(data: key.salt)
        // A path given without its leading `/` is signed with it, as imgproxy's signatureFor does.
        if path.first != "/" { hmac.update(data: [UInt8(ascii: "/")]) }
        hmac.update(data: Array(path.utf8))
        return Array(Array(hmac.finalize()).prefix(signatureSize))
    }

    /// URL-safe base64 without padding.
    static func base64URL(_ bytes: [UInt8]) -> String {
        // Character by character: Foundation's replacingOccurrences cost more than the HMAC.
        String(Data(bytes).base64EncodedString().compactMap { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 == "=" ? nil : $0 })
    }

    /// The bytes of URL-safe base64 with or without padding; nil for anything else.
    static func bytes(base64URL text: some StringProtocol) -> [UInt8]? {
        guard text.utf8.allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "/") }) else { return nil }
        var standard = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 })
        while standard.hasSuffix("=") { standard.removeLast() }
        guard standard.count % 4 != 1 else { return nil }
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        return Data(base64Encoded: standard).map { Array($0) }
    }
}
