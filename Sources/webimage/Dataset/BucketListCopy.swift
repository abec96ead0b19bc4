import Foundation
import WebImage
import WebImageGCS
import WebImageS3

/// `prefetch -i s3://BUCKET/KEY` or `-i gs://BUCKET/OBJECT`: the list copied to a temporary file
/// (under its own name, so that `.gz` and the format's extension still say what it is), in ranges
/// of 16 MiB so that a list of any size is read whole whatever the client's object size limit.
enum BucketListCopy {
    static let rangeBytes = 16 << 20

    /// The local copy's URL, in a temporary folder of its own that the caller removes.
    static func download(_ text: String, environment: [String: String]) async throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-list-\(UUID().uuidString)")
        do {
            if let url = URL(string: text), let location = S3Location(url: url) {
                return try await withS3Client("cannot read the list \(text)", environment: environment) { client in
                    let size = try await client.headObject(location).size ?? 0
                    return try await copy(named: location.key, size: size, into: folder, list: text) { range in
                        try await client.getObject(location, options: S3GetOptions(range: "bytes=\(range.lowerBound)-\(range.upperBound)"))
                            .data
                    }
                }
            }
            if let url = URL(string: text), let location = GCSLocation(url: url) {
                return try await withGCSClient("cannot read the list \(text)", environment: environment) { client in
                    let size = try await client.objectSize(location)
                    return try await copy(named: location.object, size: size, into: folder, list: text) { range in
                        try await client.getObject(location, range: range).data
                    }
                }
            }
            throw CommandFailure("-i \(text) is not s3://BUCKET/KEY or gs://BUCKET/OBJECT")
        } catch {
            try? FileManager.default.removeItem(at: folder)
            if let failure = error as? CommandFailure { throw failure }
            throw CommandFailure("cannot read the list \(text): \(error)")
        }
    }

    /// `size` bytes copied into `folder` under the last segment of `name`, range after range.
    private static func copy(
        named name: String, size: Int, into folder: URL, list text: String, read: (ClosedRange<Int>) async throws -> Data
    ) async throws -> URL {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
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
        return file
    }
}
