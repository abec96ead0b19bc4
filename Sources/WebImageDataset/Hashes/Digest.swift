import Crypto
package import Foundation
import WebImageCore

/// The hashes img2dataset computes and verifies (Python's `hashlib` names), as lower-case hex.
package enum DigestKind: String, CaseIterable, Sendable {
    case md5, sha256, sha512

    /// The hex digest of `data`.
    package func hex(of data: Data) -> String {
        switch self {
        case .md5: Insecure.MD5.hash(data: data).lowercaseHex
        case .sha256: SHA256.hash(data: data).lowercaseHex
        case .sha512: SHA512.hash(data: data).lowercaseHex
        }
    }
}

/// A download's hex digests, each computed at most once: `--verify-hash`, `--dedup` (SHA-256)
/// and `--compute-hash` may all ask for the same one.
package struct DownloadHashes {
    package let data: Data
    private var computed: [DigestKind: String] = [:]

    package init(_ data: Data) {
        self.data = data
    }

    package mutating func hex(_ kind: DigestKind) -> String {
        if let known = computed[kind] { return known }
        let hex = kind.hex(of: data)
        computed[kind] = hex
        return hex
    }
}

/// What `--dedup` remembers of every download of a run: the first 16 bytes of its SHA-256 (a
/// collision needs about 2^64 images), 16 bytes a row plus the set's own overhead, not the
/// bytes or the URL.
package final class DownloadDigests: Sendable {
    private struct Prefix: Hashable {
        let high: UInt64
        let low: UInt64
    }

    private let seen = Locked([Prefix: String]())

    /// An empty memory.
    package init() {}

    /// The key of an earlier row with the same bytes, or nil (and `key` is remembered for them).
    package func firstKey(for hashes: inout DownloadHashes, key: String) -> String? {
        // The first 32 hex digits are the digest's first 16 bytes.
        let hex = hashes.hex(.sha256)
        let prefix = Prefix(high: UInt64(hex.prefix(16), radix: 16) ?? 0, low: UInt64(hex.dropFirst(16).prefix(16), radix: 16) ?? 0)
        return seen.withLock { seen in
            if let earlier = seen[prefix] { return earlier }
            seen[prefix] = key
            return nil
        }
    }
}
