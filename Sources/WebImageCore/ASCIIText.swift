/// Comparisons and trimming for protocol text (header names, media types, directives), which is
/// ASCII by definition. Foundation's `caseInsensitiveCompare` and `trimmingCharacters(in:)` go
/// through Unicode folding and character sets; on a download's hot path they cost more than the
/// rest of the response handling.
///
/// Both are `@inlinable` byte loops: called from another module, a generic `some StringProtocol`
/// method is otherwise run unspecialized, and a `zip(…).allSatisfy` over two `UTF8View`s then asks
/// the runtime for generic metadata on every byte. `perf record` over 16,000 downloads put 11% of
/// all samples in that lookup, the downloader's header lookups being its callers.
extension StringProtocol {
    /// Whether the two texts are equal when ASCII letters are compared without regard to case.
    @inlinable
    package func equalsIgnoringASCIICase(_ other: some StringProtocol) -> Bool {
        var mine = utf8.makeIterator()
        var theirs = other.utf8.makeIterator()
        while true {
            switch (mine.next(), theirs.next()) {
            case (nil, nil): return true
            case (let byte?, let otherByte?):
                if byte != otherByte, asciiLowercased(byte) != asciiLowercased(otherByte) { return false }
            default: return false
            }
        }
    }

    /// The text without the spaces and tabs at either end (HTTP's optional whitespace).
    @inlinable
    package func trimmingASCIIWhitespace() -> SubSequence {
        let isWhitespace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isWhitespace($0) }), let last = lastIndex(where: { !isWhitespace($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}

/// `byte` with an ASCII capital letter made small; every other byte as it is.
@inlinable
package func asciiLowercased(_ byte: UInt8) -> UInt8 {
    byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
}
