/// Comparisons and trimming for protocol text (header names, media types, directives), which is
/// ASCII by definition. Foundation's `caseInsensitiveCompare` and `trimmingCharacters(in:)` go
/// through Unicode folding and character sets; on a download's hot path they cost more than the
/// rest of the response handling.
extension StringProtocol {
    /// Whether the two texts are equal when ASCII letters are compared without regard to case.
    package func equalsIgnoringASCIICase(_ other: some StringProtocol) -> Bool {
        let mine = utf8
        let theirs = other.utf8
        guard mine.count == theirs.count else { return false }
        return zip(mine, theirs).allSatisfy { Self.lowercasedASCII($0) == Self.lowercasedASCII($1) }
    }

    /// The text without the spaces and tabs at either end (HTTP's optional whitespace).
    package func trimmingASCIIWhitespace() -> SubSequence {
        let isWhitespace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isWhitespace($0) }), let last = lastIndex(where: { !isWhitespace($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }

    private static func lowercasedASCII(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }
}
