import Foundation
import WebImage
import WebImageDataset
import WebImageGCS
import WebImageS3

/// `prefetch -i s3://BUCKET/KEY` or `-i gs://BUCKET/OBJECT`: the list copied to a temporary file
/// (under its own name, so that `.gz` and the format's extension still say what it is), in ranges
/// of 16 MiB so that a list of any size is read whole whatever the client's object size limit.
/// `-i s3://BUCKET/PREFIX/` (a trailing `/`): the lists of the format directly under the prefix
/// (as img2dataset globs `PREFIX/*.csv`), copied into a temporary folder that is read as one.
enum BucketListCopy {
    static let rangeBytes = 16 << 20

    /// A copy: the path to read (a file, or the folder of a prefix's lists), in `folder`, a
    /// temporary folder of its own that the caller removes.
    struct Copy {
        let path: String
        let folder: URL
    }

    /// Copies the list (or a prefix's lists of `format`) named by `text`.
    static func download(_ text: String, format: ListFormat, environment: [String: String]) async throws -> Copy {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-list-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let path: String
            if let url = URL(string: text), let location = S3Location(url: url) {
                path = try await withS3Client("cannot read the list \(text)", environment: environment) { client in
                    try await copyS3(location, format: format, client: client, into: folder, list: text)
                }
            } else if let url = URL(string: text), let location = GCSLocation(url: url) {
                path = try await withGCSClient("cannot read the list \(text)", environment: environment) { client in
                    try await copyGCS(location, format: format, client: client, into: folder, list: text)
                }
            } else {
                throw CommandFailure("-i \(text) is not s3://BUCKET/KEY or gs://BUCKET/OBJECT")
            }
            return Copy(path: path, folder: folder)
        } catch {
            try? FileManager.default.removeItem(at: folder)
            if let failure = error as? CommandFailure { throw failure }
            throw CommandFailure("cannot read the list \(text): \(error)")
        }
    }

    private static func copyS3(_ location: S3Location, format: ListFormat, client: S3Client, into folder: URL, list text: String)
        async throws
        -> String
    {
        guard isPrefix(location.key) else {
            let size = try await client.headObject(location).size ?? 0
            return try await copy(named: location.key, size: size, into: folder, list: text) { range in
                try await client.getObject(location, options: S3GetOptions(range: "bytes=\(range.lowerBound)-\(range.upperBound)")).data
            }
        }
        var keys: [(key: String, size: Int)] = []
        for try await object in client.objects(bucket: location.bucket, prefix: location.key, delimiter: "/") {
            keys.append((object.key, object.size))
        }
        return try await copyLists(keys, format: format, into: folder, list: text) { key, range in
            let object = S3Location(bucket: location.bucket, key: key)
            return try await client.getObject(object, options: S3GetOptions(range: "bytes=\(range.lowerBound)-\(range.upperBound)")).data
        }
    }

    private static func copyGCS(_ location: GCSLocation, format: ListFormat, client: GCSClient, into folder: URL, list text: String)
        async throws -> String
    {
        guard isPrefix(location.object) else {
            let size = try await client.objectSize(location)
            return try await copy(named: location.object, size: size, into: folder, list: text) { range in
                try await client.getObject(location, range: range).data
            }
        }
        var names: [(key: String, size: Int)] = []
        var token: String?
        repeat {
            let page = try await client.listObjects(bucket: location.bucket, prefix: location.object, delimiter: "/", pageToken: token)
            names += page.objects.map { ($0.name, $0.size) }
            token = page.nextPageToken
        } while token != nil
        return try await copyLists(names, format: format, into: folder, list: text) { name, range in
            try await client.getObject(GCSLocation(bucket: location.bucket, object: name), range: range).data
        }
    }

    /// A key that names a prefix rather than an object: empty (the whole bucket) or ending in `/`.
    private static func isPrefix(_ key: String) -> Bool {
        key.isEmpty || key.hasSuffix("/")
    }

    /// The objects among `objects` that hold lists of `format`, each copied into `folder`; the
    /// folder's path. Refuses a prefix with none.
    private static func copyLists(
        _ objects: [(key: String, size: Int)], format: ListFormat, into folder: URL, list text: String,
        read: (String, ClosedRange<Int>) async throws -> Data
    ) async throws -> String {
        let lists = objects.filter { ListFormat.holds(format, name: $0.key) }.sorted { $0.key < $1.key }
        guard !lists.isEmpty else { throw CommandFailure("\(text) holds no .\(format.rawValue) list (nor .\(format.rawValue).gz)") }
        for object in lists {
            _ = try await copy(named: object.key, size: object.size, into: folder, list: text) { try await read(object.key, $0) }
        }
        return folder.path
    }

    /// `size` bytes copied into `folder` under the last segment of `name`, range after range.
    private static func copy(
        named name: String, size: Int, into folder: URL, list text: String, read: (ClosedRange<Int>) async throws -> Data
    ) async throws -> String {
        let file = folder.appendingPathComponent((name as NSString).lastPathComponent)
        guard FileManager.default.createFile(atPath: file.path, contents: nil), let handle = FileHandle(forWritingAtPath: file.path) else {
            throw CommandFailure("cannot write a copy of the list in \(folder.path)")
        }
        defer { try? handle.close() }
        var offset = 0
        while offset < size {
            let end = min(offset + rangeBytes, size) - 1
            let part = try await read(offset...end)
            guard part.count == end - offset + 1 else {
                throw CommandFailure("the list \(text) changed while it was read (\(part.count) bytes for \(offset)-\(end))")
            }
            try handle.write(contentsOf: part)
            offset = end + 1
        }
        return file.path
    }
}
