import Foundation
import Testing

@testable import WebImageDataset

/// The hashes img2dataset computes and verifies, each computed once a download.
@Suite("Download digests")
struct DigestTests {
    @Test("--dedup keys a download by its SHA-256, the one --compute-hash and --verify-hash read, computed once")
    func dedupDigests() {
        let digests = DownloadDigests()
        var first = DownloadHashes(Data("one".utf8))
        // The record's hash first, then the dedup table reads the same digest.
        #expect(first.hex(.sha256) == DigestKind.sha256.hex(of: Data("one".utf8)))
        #expect(digests.firstKey(for: &first, key: "000000000") == nil)
        var again = DownloadHashes(Data("one".utf8))
        #expect(digests.firstKey(for: &again, key: "000000001") == "000000000")
        var other = DownloadHashes(Data("two".utf8))
        #expect(digests.firstKey(for: &other, key: "000000002") == nil)
        #expect(other.hex(.md5) == DigestKind.md5.hex(of: Data("two".utf8)))
    }
}
