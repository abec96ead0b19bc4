import Foundation
import WebImage
import WebImageS3

/// `prefetch -i s3://BUCKET/KEY`: the list copied to a temporary file (under its own name, so
/// that `.gz` and the format's extension still say what it is), in ranges of 16 MiB so that a
/// list of any size is read whole whatever the client's object size limit.
enum S3ListCopy {
    static let rangeBytes = 16 << 20

    /// The local copy's URL, in a temporary folder of its own that the caller removes.
    static func download(_ text: String, environment: [String: String]) async throws -> URL {
        guard let url = URL(string: text), let location = S3Location(url: url) else {
            throw CommandFailure("-i \(text) is not s3://BUCKET/KEY")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-list-\(UUID().uuidString)")
        do {
            return try await withS3Client("cannot read the list \(text)", environment: environment) { client in
                try await copy(location, with: client, into: folder, named: text)
            }
        } catch {
            try? FileManager.default.removeItem(at: folder)
            if let failure = error as? CommandFailure { throw failure }
            throw CommandFailure("cannot read the list \(text): \(error)")
        }
    }

    /// The object at `location` copied into `folder` under its own name, range after range.
    private static func copy(_ location: S3Location, with client: S3Client, into folder: URL, named text: String) async throws -> URL {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent((location.key as NSString).lastPathComponent)
        guard FileManager.default.createFile(atPath: file.path, contents: nil), let handle = FileHandle(forWritingAtPath: file.path) else {
            throw CommandFailure("cannot write a copy of the list in \(folder.path)")
        }
        defer { try? handle.close() }
        let size = try await client.headObject(location).size ?? 0
        var offset = 0
        while offset < size {
            let end = min(offset + rangeBytes, size) - 1
            let part = try await client.getObject(location, options: S3GetOptions(range: "bytes=\(offset)-\(end)"))
            guard part.data.count == end - offset + 1 else {
                throw CommandFailure("the list \(text) changed while it was read (\(part.data.count) bytes for \(offset)-\(end))")
            }
            try handle.write(contentsOf: part.data)
            offset = end + 1
        }
        return file
    }
}
