/// Why a list cannot be read, or a setting of a crawl cannot hold: the text names the place
/// (the file, the line, the element) or the setting, and is what the command prints.
public struct DatasetError: Error, CustomStringConvertible, Sendable {
    public let description: String

    /// An error saying `description`.
    public init(_ description: String) {
        self.description = description
    }
}

extension String {
    /// The text with zeros in front up to `width` characters (JSON's `\u` escapes, tar's octal
    /// fields, dataset keys).
    package func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
