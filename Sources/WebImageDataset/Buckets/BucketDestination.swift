package import Foundation
package import WebImage
package import WebImageGCS
package import WebImageS3

/// Shards under a bucket's prefix (`-o s3://BUCKET/PREFIX`, `-o gs://BUCKET/PREFIX`), laid out
/// as in a folder: `PREFIX/00000.tar` (or `PREFIX/00000/KEY.jpg`, ...), `PREFIX/00000.jsonl`,
/// `PREFIX/00000.parquet`, `PREFIX/00000_stats.json`.
///
/// A tar shard (and a `parquet` shard's table, which holds its images) is one streamed upload
/// (S3's multipart upload, Cloud Storage's resumable one), its parts sent as the object grows and
/// finished when the shard's last row is in, so an object under a shard's name is always whole; a
/// run killed inside a shard leaves an S3 upload open, which the rerun aborts when it opens that
/// shard again (a bucket lifecycle rule expires those of a run never rerun: docs/crawling.md), or
/// a Cloud Storage session, which expires by itself. A files shard puts each file as it comes and
/// first deletes what a stopped run left under its folder. In both, the `.jsonl` is kept in
/// memory until the shard completes.
package struct BucketDestination: DatasetDestination {
    /// The size of a tar shard's parts but the last: S3's least is 5 MiB, its most parts 10,000,
    /// so a shard can grow to 80 GB; a multiple of Cloud Storage's 256 KiB.
    package static let defaultPartSize = 8 << 20

    package let store: any ShardStore
    /// Empty, or ends with `/`.
    package let prefix: String
    package let partSize: Int

    /// `s3://BUCKET/PREFIX` with its client; the prefix is taken as a folder.
    package init(url: URL, client: S3Client, partSize: Int = Self.defaultPartSize) throws {
        guard let location = S3Location(url: url), !location.bucket.isEmpty else {
            throw DatasetError("\(url.absoluteString) is not s3://BUCKET/PREFIX")
        }
        self.init(store: S3ShardStore(client: client, bucket: location.bucket), prefix: location.key, partSize: partSize)
    }

    /// `gs://BUCKET/PREFIX` with its client; the prefix is taken as a folder.
    package init(url: URL, client: GCSClient, partSize: Int = Self.defaultPartSize) throws {
        guard url.scheme?.lowercased() == "gs", let bucket = url.host, !bucket.isEmpty else {
            throw DatasetError("\(url.absoluteString) is not gs://BUCKET/PREFIX")
        }
        let prefix = String(url.path(percentEncoded: false).drop { $0 == "/" })
        self.init(store: GCSShardStore(client: client, bucket: bucket), prefix: prefix, partSize: partSize)
    }

    private init(store: any ShardStore, prefix: String, partSize: Int) {
        self.store = store
        self.prefix = prefix.isEmpty || prefix.hasSuffix("/") ? prefix : prefix + "/"
        self.partSize = partSize
    }

    package func finishedShards() async throws -> Set<Int> {
        // The prefix's own level only: a files shard's folder holds a shard's worth of keys.
        Set(
            try await store.objects(prefix: prefix, delimiter: "/").compactMap {
                Self.shardNumber(statsName: $0.key.dropFirst(prefix.count))
            })
    }

    package func openShard(_ name: String, layout: DatasetWriter.Layout, imageColumn: String) async throws -> any DatasetShardOutput {
        let base = prefix + name
        let table = DatasetShardTable(layout: layout, imageColumn: imageColumn)
        let streamed: (suffix: String, contentType: String)? =
            switch layout {
            case .webdataset: (".tar", "application/x-tar")
            case .parquet: (".parquet", BucketShard.parquetType)
            case .files: nil
            }
        guard let streamed else {
            for stale in try await store.objects(prefix: base + "/", delimiter: nil) { try await store.delete(stale.key) }
            return BucketShard(store: store, base: base, upload: nil, table: table, partSize: partSize)
        }
        let upload = try await store.startUpload(base + streamed.suffix, contentType: streamed.contentType)
        return BucketShard(store: store, base: base, upload: upload, table: table, partSize: partSize)
    }
}

/// A shard of a ``BucketDestination``. An actor: the streamed object's bytes, the table and the
/// lines change from many rows at once; its awaits let other rows in, so each change is made
/// whole before one.
private actor BucketShard: DatasetShardOutput {
    static let parquetType = "application/vnd.apache.parquet"
    private let store: any ShardStore
    private let base: String
    /// The upload of the tar shard's archive or the `parquet` shard's table; nil for a files shard.
    private let upload: (any ShardUpload)?
    private let partSize: Int
    private let modified = Int(Date().timeIntervalSince1970)
    /// The streamed object's bytes not yet sent as a part.
    private var archive: Data
    private var table: DatasetShardTable
    /// Whether a row is sending parts: parts go out one after another, in order.
    private var sending = false
    private var lines = Data()

    init(store: any ShardStore, base: String, upload: (any ShardUpload)?, table: DatasetShardTable, partSize: Int) {
        self.store = store
        self.base = base
        self.upload = upload
        self.table = table
        archive = table.head ?? Data()
        self.partSize = partSize
    }

    /// A row's files go out before it returns (a files shard's objects, or the parts its bytes
    /// filled, unless another row is sending them), so that once the shard's every row has
    /// returned, every full part is uploaded and none is being sent.
    func add(_ row: DatasetShardRow) async throws {
        lines.append(row.line)
        archive.append(table.add(row))
        guard let upload else {
            for member in row.members {
                try await store.put(base + "/" + member.name, data: member.data, contentType: Self.contentType(member.name))
            }
            return
        }
        for member in row.members { try TarFormat.append(name: member.name, data: member.data, modified: modified, to: &archive) }
        guard !sending else { return }
        sending = true
        defer { sending = false }
        while archive.count >= partSize {
            // The part: as much as there is, in whole multiples of the store's granularity.
            let length = archive.count - archive.count % upload.granularity
            let part = archive.prefix(length)
            archive = archive.dropFirst(length)
            try await upload.send(Data(part))
        }
    }

    func complete(stats: Data) async throws {
        let streamsTable = table.head != nil
        if let upload {
            archive.append(streamsTable ? table.finish() : TarFormat.end)
            try await upload.finish(archive)
            archive = Data()
        }
        try await store.put(base + ".jsonl", data: lines, contentType: "application/jsonl")
        if !streamsTable { try await store.put(base + ".parquet", data: table.finish(), contentType: Self.parquetType) }
        try await store.put(base + "_stats.json", data: stats, contentType: "application/json")
    }

    func abandon() async {
        await upload?.abort()
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
