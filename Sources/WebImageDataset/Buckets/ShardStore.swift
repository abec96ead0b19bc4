package import Foundation
package import WebImageGCS
package import WebImageS3

/// What a dataset needs of a bucket, for its lists and its shards: objects listed with their
/// sizes, read by ranges, put and deleted, and one object written as a stream of parts that is
/// whole under its name only once finished. S3's multipart uploads and Cloud Storage's resumable
/// uploads both are such streams.
package protocol ShardStore: Sendable {
    /// `s3://BUCKET` or `gs://BUCKET`, for messages.
    var bucketURL: String { get }
    func put(_ key: String, data: Data, contentType: String) async throws
    func delete(_ key: String) async throws
    /// The objects under `prefix`, every page of the listing; with `delimiter`, those of the
    /// prefix's own level.
    func objects(prefix: String, delimiter: String?) async throws -> [(key: String, size: Int)]
    /// The size of the object `key`.
    func size(of key: String) async throws -> Int
    /// The bytes `range` of the object `key`.
    func read(_ key: String, range: ClosedRange<Int>) async throws -> Data
    /// Starts the streamed object `key`, ending what a stopped run left of it.
    func startUpload(_ key: String, contentType: String) async throws -> any ShardUpload
}

/// One streamed object. Its parts are sent one after another, never two at once.
package protocol ShardUpload: Sendable {
    /// What every part but the last is a multiple of: Cloud Storage's chunks are multiples of
    /// 256 KiB; S3's parts any size (of at least 5 MiB, which the shard's part size keeps).
    var granularity: Int { get }
    /// Sends the next part.
    func send(_ part: Data) async throws
    /// Sends the last part and makes the object whole.
    func finish(_ last: Data) async throws
    /// Gives the object up: nothing is left under its name.
    func abort() async
}

/// An S3 bucket.
package struct S3ShardStore: ShardStore {
    package let client: S3Client
    package let bucket: String

    /// The bucket `bucket` through `client`.
    package init(client: S3Client, bucket: String) {
        (self.client, self.bucket) = (client, bucket)
    }

    package var bucketURL: String { "s3://\(bucket)" }

    package func put(_ key: String, data: Data, contentType: String) async throws {
        try await client.putObject(S3Location(bucket: bucket, key: key), data: data, contentType: contentType)
    }

    package func delete(_ key: String) async throws {
        try await client.deleteObject(S3Location(bucket: bucket, key: key))
    }

    package func objects(prefix: String, delimiter: String?) async throws -> [(key: String, size: Int)] {
        var objects: [(key: String, size: Int)] = []
        for try await object in client.objects(bucket: bucket, prefix: prefix, delimiter: delimiter) {
            objects.append((object.key, object.size))
        }
        return objects
    }

    package func size(of key: String) async throws -> Int {
        try await client.headObject(S3Location(bucket: bucket, key: key)).size ?? 0
    }

    package func read(_ key: String, range: ClosedRange<Int>) async throws -> Data {
        let options = S3GetOptions(range: "bytes=\(range.lowerBound)-\(range.upperBound)")
        return try await client.getObject(S3Location(bucket: bucket, key: key), options: options).data
    }

    /// A run killed inside a shard left its upload open: it is aborted first.
    package func startUpload(_ key: String, contentType: String) async throws -> any ShardUpload {
        let object = S3Location(bucket: bucket, key: key)
        for stale in try await client.multipartUploads(bucket: bucket, prefix: key) where stale.key == key {
            try await client.abortMultipartUpload(object, uploadID: stale.uploadID)
        }
        return S3ShardUpload(client: client, object: object, id: try await client.createMultipartUpload(object, contentType: contentType))
    }
}

/// A multipart upload; an actor for its list of parts.
private actor S3ShardUpload: ShardUpload {
    nonisolated let granularity = 1
    private let client: S3Client
    private let object: S3Location
    private let id: String
    private var parts: [S3UploadedPart] = []

    init(client: S3Client, object: S3Location, id: String) {
        self.client = client
        self.object = object
        self.id = id
    }

    func send(_ part: Data) async throws {
        parts.append(try await client.uploadPart(object, uploadID: id, partNumber: parts.count + 1, data: part))
    }

    func finish(_ last: Data) async throws {
        try await send(last)
        try await client.completeMultipartUpload(object, uploadID: id, parts: parts)
    }

    func abort() async {
        try? await client.abortMultipartUpload(object, uploadID: id)
    }
}

/// A Cloud Storage bucket.
package struct GCSShardStore: ShardStore {
    package let client: GCSClient
    package let bucket: String

    /// The bucket `bucket` through `client`.
    package init(client: GCSClient, bucket: String) {
        (self.client, self.bucket) = (client, bucket)
    }

    package var bucketURL: String { "gs://\(bucket)" }

    package func put(_ key: String, data: Data, contentType: String) async throws {
        try await client.putObject(GCSLocation(bucket: bucket, object: key), data: data, contentType: contentType)
    }

    package func delete(_ key: String) async throws {
        try await client.deleteObject(GCSLocation(bucket: bucket, object: key))
    }

    package func objects(prefix: String, delimiter: String?) async throws -> [(key: String, size: Int)] {
        var objects: [(key: String, size: Int)] = []
        var token: String?
        repeat {
            let page = try await client.listObjects(bucket: bucket, prefix: prefix, delimiter: delimiter, pageToken: token)
            objects += page.objects.map { ($0.name, $0.size) }
            token = page.nextPageToken
        } while token != nil
        return objects
    }

    package func size(of key: String) async throws -> Int {
        try await client.objectSize(GCSLocation(bucket: bucket, object: key))
    }

    package func read(_ key: String, range: ClosedRange<Int>) async throws -> Data {
        try await client.getObject(GCSLocation(bucket: bucket, object: key), range: range).data
    }

    /// A resumable upload a stopped run left behind holds no object under the name (its session
    /// expires in a week): nothing to end first.
    package func startUpload(_ key: String, contentType: String) async throws -> any ShardUpload {
        let session = try await client.startResumableUpload(GCSLocation(bucket: bucket, object: key), contentType: contentType)
        return GCSShardUpload(client: client, session: session)
    }
}

/// A resumable upload; an actor for the offset its chunks have reached.
private actor GCSShardUpload: ShardUpload {
    nonisolated let granularity = GCSClient.chunkGranularity
    private let client: GCSClient
    private let session: URL
    private var offset = 0

    init(client: GCSClient, session: URL) {
        self.client = client
        self.session = session
    }

    func send(_ part: Data) async throws {
        let start = offset
        offset += part.count
        try await client.uploadChunk(session: session, data: part, offset: start, total: nil)
    }

    func finish(_ last: Data) async throws {
        let start = offset
        offset += last.count
        try await client.uploadChunk(session: session, data: last, offset: start, total: offset)
    }

    /// The session is left to expire; no object was made under the name.
    func abort() async {}
}
