import Foundation

/// The lines of a URL list read a block at a time, so that a list of millions of lines is
/// never held whole: blank lines and `#` comments are skipped, spaces around a URL trimmed.
final class URLListReader {
    private let handle: FileHandle
    private var buffer = Data()
    private var atEnd = false

    /// Reads `path`, or standard input for `-`.
    init(path: String) throws {
        if path == "-" {
            handle = FileHandle.standardInput
        } else {
            guard let handle = FileHandle(forReadingAtPath: path) else { throw CommandFailure("cannot read \(path)") }
            self.handle = handle
        }
    }

    /// The next URL, or nil at the end of the list.
    func next() throws -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[buffer.startIndex..<newline]
                buffer.removeSubrange(buffer.startIndex...newline)
                if let url = Self.url(in: line) { return url }
                continue
            }
            if atEnd {
                guard !buffer.isEmpty else { return nil }
                let line = buffer
                buffer = Data()
                return Self.url(in: line)
            }
            let block = try handle.read(upToCount: 1 << 16) ?? Data()
            if block.isEmpty { atEnd = true } else { buffer.append(block) }
        }
    }

    private static func url(in line: Data) -> String? {
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty || text.hasPrefix("#") ? nil : text
    }
}
