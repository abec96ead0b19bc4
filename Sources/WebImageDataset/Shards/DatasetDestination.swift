package import Foundation
import WebImageCore

/// Where a dataset's shards go: a local folder (``FolderDestination``) or a bucket's prefix
/// (``BucketDestination``). Both lay the shards out alike and follow one rule: a shard's
/// `_stats.json` is written last, when everything else of it is under its final name, so a shard
/// with stats is whole and a rerun skips it.
package protocol DatasetDestination: Sendable {
    /// The numbers of the shards a run finished (their `_stats.json` is there).
    func finishedShards() async throws -> Set<Int>
    /// Starts shard `name` in `layout` (`imageColumn` names the images' column in the `parquet`
    /// one), dropping what a run that stopped inside it left.
    func openShard(_ name: String, layout: DatasetWriter.Layout, imageColumn: String) async throws -> any DatasetShardOutput
}

/// One shard being written.
package protocol DatasetShardOutput: Sendable {
    /// One row: its files, its line of the shard's `.jsonl` and its record in the shard's table.
    /// When it returns, the row is as safe as the destination keeps rows before the shard
    /// completes.
    func add(_ row: DatasetShardRow) async throws
    /// Every row is in: the shard's files take their final names, its Parquet table
    /// (`NNNNN.parquet`, img2dataset's) is made whole, then the stats, which mark it done.
    func complete(stats: Data) async throws
    /// The run stops without completing the shard: what can be dropped now is.
    func abandon() async
}

/// What one row puts in its shard.
package struct DatasetShardRow: Sendable {
    /// Its files, `KEY.jpg`, `KEY.txt`, `KEY.json` (none for a failure or in the `parquet` layout).
    package var members: [DatasetMember]
    /// Its record.
    package var record: JSONValue
    /// The record's line of the `.jsonl`.
    package var line: Data
    /// The image, for the `parquet` layout's image column (nil for a failure).
    package var image: Data?
}

/// A file of a sample: `KEY.jpg`, `KEY.txt`, `KEY.json`.
package struct DatasetMember: Sendable {
    package var name: String
    package var data: Data
}

/// A shard's Parquet table as its rows come in, in the order they come: the records, kept until
/// the shard completes (they are small), and in the `parquet` layout the image column, whose
/// pages go out to the shard's `.parquet` at once (``ParquetStreamedColumn``). Not safe to share:
/// each shard output keeps its own under the lock (or in the actor) that orders its rows.
package struct DatasetShardTable {
    private var records: [JSONValue] = []
    private var images: ParquetStreamedColumn?

    /// A table for a shard of `layout`, its images in a column `imageColumn` in the `parquet` one.
    package init(layout: DatasetWriter.Layout, imageColumn: String) {
        images = layout == .parquet ? ParquetStreamedColumn(name: imageColumn) : nil
    }

    /// The first bytes of the shard's `.parquet` while it is streamed, or nil when it is written
    /// whole at the end.
    package var head: Data? { images == nil ? nil : ParquetStreamedColumn.head }

    /// Adds a row; returns what to append to the streamed `.parquet` (nothing when it is not).
    package mutating func add(_ row: DatasetShardRow) -> Data {
        records.append(row.record)
        return images?.page(row.image) ?? Data()
    }

    /// The whole table, or what completes the streamed one.
    package func finish() -> Data {
        guard let images else { return ParquetTableWriter.table(records) }
        return ParquetTableWriter.rest(of: records, after: images)
    }
}

extension DatasetDestination {
    /// A shard's number from the name of its stats, `00012_stats.json` → 12.
    package static func shardNumber(statsName name: Substring) -> Int? {
        guard name.hasSuffix("_stats.json") else { return nil }
        let digits = name.dropLast("_stats.json".count)
        guard digits.count >= DatasetWriter.shardDigits, digits.allSatisfy(\.isASCII) else { return nil }
        return Int(digits)
    }
}

/// Shards in a local folder: `00000.tar` (or the folder `00000/`), `00000.jsonl`, `00000.parquet`,
/// `00000_stats.json`. The `.tar` and `.jsonl` (and in the `parquet` layout the `.parquet`, which
/// holds the images) are written under `.partial` names and renamed when the shard completes, a
/// table without images written then; a files shard's folder is emptied when it is opened again.
package struct FolderDestination: DatasetDestination {
    package let directory: URL

    package init(directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.directory = directory
    }

    package func finishedShards() throws -> Set<Int> {
        Set(try FileManager.default.contentsOfDirectory(atPath: directory.path).compactMap { Self.shardNumber(statsName: $0[...]) })
    }

    package func openShard(_ name: String, layout: DatasetWriter.Layout, imageColumn: String) throws -> any DatasetShardOutput {
        try FolderShard(base: directory.appendingPathComponent(name).path, layout: layout, imageColumn: imageColumn)
    }
}

/// A shard of a ``FolderDestination``.
private final class FolderShard: DatasetShardOutput, @unchecked Sendable {
    // @unchecked: the archive, the streamed table, the table and the lines' handle are used under
    // `lock` only.
    private let base: String
    private let layout: DatasetWriter.Layout
    private let lock = NSLock()
    private let tar: TarWriter?
    /// The `.parquet.partial` being streamed, in the `parquet` layout.
    private let parquet: FileHandle?
    private var table: DatasetShardTable
    private let lines: FileHandle
    /// Lines not yet written: they go out a few dozen KiB at a time rather than a write each,
    /// as the shard's `.jsonl` is read only once it is complete.
    private var pendingLines = Data()
    private static let linesBatch = 64 * 1024

    init(base: String, layout: DatasetWriter.Layout, imageColumn: String) throws {
        self.base = base
        self.layout = layout
        table = DatasetShardTable(layout: layout, imageColumn: imageColumn)
        lines = try Self.create(base + ".jsonl.partial")
        tar = layout == .webdataset ? try TarWriter(path: base + ".tar.partial") : nil
        parquet = try table.head.map { head in
            let handle = try Self.create(base + ".parquet.partial")
            try handle.write(contentsOf: head)
            return handle
        }
        if layout == .files {
            try? FileManager.default.removeItem(atPath: base)
            try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        }
    }

    private static func create(_ path: String) throws -> FileHandle {
        guard FileManager.default.createFile(atPath: path, contents: nil) else { throw DatasetError("cannot create \(path)") }
        return try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    }

    func add(_ row: DatasetShardRow) throws {
        if layout == .files {
            // Files of their own: written outside the lock, as they share nothing.
            for member in row.members { try FileSystem.writeWhole(member.data, to: base + "/" + member.name) }
        }
        try lock.withLock {
            try tar?.append(row.members)
            let page = table.add(row)
            if !page.isEmpty { try parquet?.write(contentsOf: page) }
            pendingLines.append(row.line)
            if pendingLines.count >= Self.linesBatch { try writePendingLines() }
        }
    }

    func complete(stats: Data) throws {
        let whole = try lock.withLock { () throws -> Data? in
            try tar?.finish()
            try writePendingLines()
            try lines.synchronize()
            try lines.close()
            guard let parquet else { return table.finish() }
            try parquet.write(contentsOf: table.finish())
            try parquet.synchronize()
            try parquet.close()
            return nil
        }
        if let whole { try FileSystem.writeWhole(whole, to: base + ".parquet") }
        let streamed = [".jsonl"] + (tar == nil ? [] : [".tar"]) + (parquet == nil ? [] : [".parquet"])
        for suffix in streamed {
            let partial = base + suffix + ".partial"
            guard rename(partial, base + suffix) == 0 else {
                throw DatasetError("cannot rename \(partial): \(String(cString: strerror(errno)))")
            }
        }
        try FileSystem.writeWhole(stats, to: base + "_stats.json")
    }

    /// Under `lock`.
    private func writePendingLines() throws {
        try lines.write(contentsOf: pendingLines)
        pendingLines.removeAll(keepingCapacity: true)
    }

    func abandon() {
        lock.withLock {
            tar?.abandon()
            try? parquet?.close()
            try? lines.close()
        }
    }
}
