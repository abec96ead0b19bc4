/// Slice `index` of `count` of a list (`--shard I/N`): the rows whose URL's stable hash, modulo
/// `count`, is `index`. The hash is FNV-1a (64-bit) of the URL's text, the same on every machine,
/// in every order of the list and whatever its line: N runs over copies of one list take every
/// row once, with no coordinator.
package struct ListSlice: Equatable, Sendable {
    package let index: Int
    package let count: Int

    /// Slice `index` of `count` (0 ≤ index < count, checked by the caller).
    package init(index: Int, count: Int) {
        (self.index, self.count) = (index, count)
    }

    /// Whether the row of `url` is in this slice.
    package func contains(_ url: String) -> Bool {
        Self.slice(of: url, count: count) == index
    }

    /// The slice of `count` a URL belongs to.
    package static func slice(of url: String, count: Int) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in url.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return Int(hash % UInt64(count))
    }
}
