import Crypto
import Foundation
import WebImage
import WebImageCore

/// The hashes img2dataset computes and verifies (Python's `hashlib` names), as lower-case hex.
enum DigestKind: String, CaseIterable, Sendable {
    case md5, sha256, sha512

    /// The hex digest of `data`.
    func hex(of data: Data) -> String {
        switch self {
        case .md5: Insecure.MD5.hash(data: data).lowercaseHex
        case .sha256: SHA256.hash(data: data).lowercaseHex
        case .sha512: SHA512.hash(data: data).lowercaseHex
        }
    }
}

/// What `--dedup` remembers of every download of a run: the first 16 bytes of its SHA-256 (a
/// collision needs about 2^64 images), 16 bytes a row plus the set's own overhead, not the
/// bytes or the URL.
final class DownloadDigests: Sendable {
    private struct Prefix: Hashable {
        let high: UInt64
        let low: UInt64
    }

    private let seen = Locked([Prefix: String]())

    /// The key of an earlier row with the same bytes, or nil (and `key` is remembered for them).
    func firstKey(for data: Data, key: String) -> String? {
        let digest = Array(SHA256.hash(data: data))
        var high: UInt64 = 0
        var low: UInt64 = 0
        for index in 0..<8 {
            high = high << 8 | UInt64(digest[index])
            low = low << 8 | UInt64(digest[index + 8])
        }
        let prefix = Prefix(high: high, low: low)
        return seen.withLock { seen in
            if let earlier = seen[prefix] { return earlier }
            seen[prefix] = key
            return nil
        }
    }
}
