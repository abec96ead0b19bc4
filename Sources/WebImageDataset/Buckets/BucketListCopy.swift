package import Foundation

/// A list in a bucket, copied to a local file before a run reads it (twice: the count, then the
/// run), under its own name so that `.gz` and the format's extension still say what it is, in
/// ranges of 16 MiB so that a list of any size is read whole whatever the client's object size
/// limit. A key ending in `/` (or empty) is a prefix: the lists of the format directly under it
/// (as img2dataset globs `PREFIX/*.csv`), copied into a folder that is read as one. S3 and Cloud
/// Storage alike, through their ``ShardStore``.
package enum BucketListCopy {
    package static let rangeBytes = 16 << 20

    /// A copy: the path to read (a file, or the folder of a prefix's lists), in `folder`, a
    /// temporary folder of its own that the caller removes.
    package struct Copy: Sendable {
        package let path: String
        package let folder: URL
    }

    /// Copies the list `key` of `store` (or the lists of `format` under the prefix `key`);
    /// `name` is the list as the user wrote it, for messages.
    /// - Throws: ``DatasetError`` naming the list and the reason; nothing is left behind.
    package static func download(_ key: String, from store: any ShardStore, format: ListFormat, name: String) async throws(DatasetError)
        -> Copy
    {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-list-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            guard isPrefix(key) else {
                let size = try await store.size(of: key)
                return Copy(path: try await copy(key, size: size, from: store, into: folder, name: name), folder: folder)
            }
            let lists = try await store.objects(prefix: key, delimiter: "/").filter { ListFormat.holds(format, name: $0.key) }
            guard !lists.isEmpty else { throw DatasetError("\(name) holds no .\(format.rawValue) list (nor .\(format.rawValue).gz)") }
            for list in lists.sorted(by: { $0.key < $1.key }) {
                _ = try await copy(list.key, size: list.size, from: store, into: folder, name: name)
            }
            return Copy(path: folder.path, folder: folder)
        } catch {
            try? FileManager.default.removeItem(at: folder)
            if let failure = error as? DatasetError { throw failure }
            throw DatasetError("cannot read the list \(name): \(error)")
        }
    }

    /// A key that names a prefix rather than an object: empty (the whole bucket) or ending in `/`.
    private static func isPrefix(_ key: String) -> Bool {
        key.isEmpty || key.hasSuffix("/")
    }

    /// `size` bytes of `key` copied into `folder` under its last segment, range after range.
    private static func copy(_ key: String, size: Int, from store: any ShardStore, into folder: URL, name: String) async throws -> String {
        let file = folder.appendingPathComponent((key as NSString).lastPathComponent)
        guard FileManager.default.createFile(atPath: file.path, contents: nil), let handle = FileHandle(forWritingAtPath: file.path) else {
            throw DatasetError("cannot write a copy of the list in \(folder.path)")
        }
        defer { try? handle.close() }
        var offset = 0
        while offset < size {
            let end = min(offset + rangeBytes, size) - 1
            let part = try await store.read(key, range: offset...end)
            guard part.count == end - offset + 1 else {
                throw DatasetError("the list \(name) changed while it was read (\(part.count) bytes for \(offset)-\(end))")
            }
            try handle.write(contentsOf: part)
            offset = end + 1
        }
        return file.path
    }
}
