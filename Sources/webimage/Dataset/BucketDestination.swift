import Foundation
import WebImage
import WebImageDataset
import WebImageS3

/// Shards under a bucket's prefix (`-o s3://BUCKET/PREFIX`), laid out as in a folder:
/// `PREFIX/00000.tar` (or `PREFIX/00000/KEY.jpg`, ...), `PREFIX/00000.jsonl`, `PREFIX/00000.parquet`,
/// `PREFIX/00000_stats.json`.
///
/// A tar shard (and a `parquet` shard's table, which holds its images) is one multipart upload,
/// its parts sent as the object grows and completed when the shard's last row is in, so an
/// object under a shard's name is always whole; a
/// run killed inside a shard leaves an upload open, which the rerun aborts when it opens that
/// shard again (a bucket lifecycle rule expires those of a run never rerun: docs/crawling.md).
/// A files shard puts each file as it comes and first deletes what a stopped run left under its
/// folder. In both, the `.jsonl` is kept in memory until the shard completes.
struct BucketDestination: DatasetDestination {
    /// The size of a tar shard's parts but the last: S3's least is 5 MiB, its most parts 10,000,
    /// so a shard can grow to 80 GB.
    static let defaultPartSize = 8 << 20

    let client: S3Client
    let bucket: String
    /// Empty, or ends with `/`.
    let prefix: String
    let partSize: Int

    /// `s3://BUCKET/PREFIX` with its client; the prefix is taken as a folder.
    init(url: URL, client: S3Client, partSize: Int = Self.defaultPartSize) throws {
        guard let location = S3Location(url: url), !location.bucket.isEmpty else {
            throw CommandFailure("-o \(url.absoluteString) is not s3://BUCKET/PREFIX")
        }
        self.client = client
        bucket = location.bucket
        prefix = location.key.isEmpty || location.key.hasSuffix("/") ? location.key : location.key + "/"
        self.partSize = partSize
    }

    func finishedShards() async throws -> Set<Int> {
        var numbers = Set<Int>()
        // The prefix's own level only: a files shard's folder holds a shard's worth of keys.
        for try await object in client.objects(bucket: bucket, prefix: prefix, delimiter: "/") {
            if let number = Self.shardNumber(statsName: object.key.dropFirst(prefix.count)) { numbers.insert(number) }
        }
        return numbers
    }

    func openShard(_ name: String, layout: DatasetWriter.Layout, imageColumn: String) async throws -> any DatasetShardOutput {
        let base = S3Location(bucket: bucket, key: prefix + name)
        let table = DatasetShardTable(layout: layout, imageColumn: imageColumn)
        let streamed: (suffix: String, contentType: String)? =
            switch layout {
            case .webdataset: (".tar", "application/x-tar")
            case .parquet: (".parquet", BucketShard.parquetType)
            case .files: nil
            }
        guard let streamed else {
            for try await stale in client.objects(bucket: bucket, prefix: base.key + "/") {
                try await client.deleteObject(S3Location(bucket: bucket, key: stale.key))
            }
            return BucketShard(client: client, base: base, upload: nil, table: table, partSize: partSize)
        }
        let object = S3Location(bucket: bucket, key: base.key + streamed.suffix)
        for stale in try await client.multipartUploads(bucket: bucket, prefix: object.key) where stale.key == object.key {
            try await client.abortMultipartUpload(object, uploadID: stale.uploadID)
        }
        let upload = try await client.createMultipartUpload(object, contentType: streamed.contentType)
        return BucketShard(client: client, base: base, upload: (object, upload), table: table, partSize: partSize)
    }
}

/// A shard of a ``BucketDestination``. An actor: the streamed object's bytes and parts, the
/// table and the lines change from many rows at once; its awaits let other rows in, so each
/// change is made whole before one.
private actor BucketShard: DatasetShardOutput {
    static let parquetType = "application/vnd.apache.parquet"
    private let client: S3Client
    private let base: S3Location
    /// The upload of the tar shard's archive or the `parquet` shard's table; nil for a files shard.
    private let upload: (location: S3Location, id: String)?
    private let partSize: Int
    private let modified = Int(Date().timeIntervalSince1970)
    /// The streamed object's bytes not yet sent as a part.
    private var archive: Data
    private var table: DatasetShardTable
    private var parts: [S3UploadedPart] = []
    private var nextPart = 0
    private var lines = Data()

    init(client: S3Client, base: S3Location, upload: (S3Location, String)?, table: DatasetShardTable, partSize: Int) {
        self.client = client
        self.base = base
        self.upload = upload
        self.table = table
        archive = table.head ?? Data()
        self.partSize = partSize
    }

    /// A row's files go out before it returns (a files shard's objects, or the part its bytes
    /// filled), so that once the shard's every row has returned, every part is uploaded.
    func add(_ row: DatasetShardRow) async throws {
        lines.append(row.line)
        archive.append(table.add(row))
        guard upload != nil else {
            for member in row.members {
                try await client.putObject(
                    S3Location(bucket: base.bucket, key: base.key + "/" + member.name), data: member.data,
                    contentType: Self.contentType(member.name))
            }
            return
        }
        for member in row.members { try TarFormat.append(name: member.name, data: member.data, modified: modified, to: &archive) }
        if archive.count >= partSize { try await sendPart() }
    }

    func complete(stats: Data) async throws {
        let streamsTable = table.head != nil
        if let upload {
            archive.append(streamsTable ? table.finish() : TarFormat.end)
            try await sendPart()
            try await client.completeMultipartUpload(upload.location, uploadID: upload.id, parts: parts)
        }
        try await client.putObject(S3Location(bucket: base.bucket, key: base.key + ".jsonl"), data: lines, contentType: "application/jsonl")
        if !streamsTable {
            try await client.putObject(
                S3Location(bucket: base.bucket, key: base.key + ".parquet"), data: table.finish(), contentType: Self.parquetType)
        }
        try await client.putObject(
            S3Location(bucket: base.bucket, key: base.key + "_stats.json"), data: stats, contentType: "application/json")
    }

    func abandon() async {
        guard let upload else { return }
        try? await client.abortMultipartUpload(upload.location, uploadID: upload.id)
    }

    /// The archive's bytes so far as the next part, numbered before the upload so that rows
    /// arriving meanwhile start the part after it.
    private func sendPart() async throws {
        guard let upload else { return }
        let bytes = archive
        archive = Data()
        nextPart += 1
        let number = nextPart
        parts.append(try await client.uploadPart(upload.location, uploadID: upload.id, partNumber: number, data: bytes))
    }

    private static func contentType(_ name: String) -> String {
        let extensionText = (name as NSString).pathExtension.lowercased()
        switch extensionText {
        case "txt": return "text/plain; charset=utf-8"
        case "json": return "application/json"
        default: return ImageFormat(fileExtension: extensionText)?.mimeType ?? "application/octet-stream"
        }
    }
}
