import Foundation

/// Where a dataset's shards go: a local folder (``FolderDestination``) or a bucket's prefix
/// (``BucketDestination``). Both lay the shards out alike and follow one rule: a shard's
/// `_stats.json` is written last, when everything else of it is under its final name, so a shard
/// with stats is whole and a rerun skips it.
protocol DatasetDestination: Sendable {
    /// The numbers of the shards a run finished (their `_stats.json` is there).
    func finishedShards() async throws -> Set<Int>
    /// Starts shard `name` in `layout`, dropping what a run that stopped inside it left.
    func openShard(_ name: String, layout: DatasetWriter.Layout) async throws -> any DatasetShardOutput
}

/// One shard being written.
protocol DatasetShardOutput: Sendable {
    /// One row: its files (none for a failure) and its line of the shard's `.jsonl`. When it
    /// returns, the row is as safe as the destination keeps rows before the shard completes.
    func add(members: [DatasetMember], line: Data) async throws
    /// Every row is in: the shard's files take their final names, its records' Parquet table
    /// (`NNNNN.parquet`, img2dataset's) is written, then the stats, which mark it done.
    func complete(table: Data, stats: Data) async throws
    /// The run stops without completing the shard: what can be dropped now is.
    func abandon() async
}

/// A file of a sample: `KEY.jpg`, `KEY.txt`, `KEY.json`.
struct DatasetMember: Sendable {
    var name: String
    var data: Data
}

extension DatasetDestination {
    /// A shard's number from the name of its stats, `00012_stats.json` → 12.
    static func shardNumber(statsName name: Substring) -> Int? {
        guard name.hasSuffix("_stats.json") else { return nil }
        let digits = name.dropLast("_stats.json".count)
        guard digits.count >= DatasetWriter.shardDigits, digits.allSatisfy(\.isASCII) else { return nil }
        return Int(digits)
    }
}

/// Shards in a local folder: `00000.tar` (or the folder `00000/`), `00000.jsonl`, `00000.parquet`,
/// `00000_stats.json`. The `.tar` and `.jsonl` are written under `.partial` names and renamed
/// when the shard completes, the `.parquet` written then; a files shard's folder is emptied when
/// it is opened again.
struct FolderDestination: DatasetDestination {
    let directory: URL

    init(directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.directory = directory
    }

    func finishedShards() throws -> Set<Int> {
        Set(try FileManager.default.contentsOfDirectory(atPath: directory.path).compactMap { Self.shardNumber(statsName: $0[...]) })
    }

    func openShard(_ name: String, layout: DatasetWriter.Layout) throws -> any DatasetShardOutput {
        try FolderShard(base: directory.appendingPathComponent(name).path, layout: layout)
    }
}

/// A shard of a ``FolderDestination``.
private final class FolderShard: DatasetShardOutput, @unchecked Sendable {
    // @unchecked: the archive and the lines' handle are used under `lock` only.
    private let base: String
    private let layout: DatasetWriter.Layout
    private let lock = NSLock()
    private let tar: TarWriter?
    private let lines: FileHandle
    /// Lines not yet written: they go out a few dozen KiB at a time rather than a write each,
    /// as the shard's `.jsonl` is read only once it is complete.
    private var pendingLines = Data()
    private static let linesBatch = 64 * 1024

    init(base: String, layout: DatasetWriter.Layout) throws {
        self.base = base
        self.layout = layout
        let linesPath = base + ".jsonl.partial"
        guard FileManager.default.createFile(atPath: linesPath, contents: nil) else { throw CommandFailure("cannot create \(linesPath)") }
        switch layout {
        case .webdataset:
            tar = try TarWriter(path: base + ".tar.partial")
        case .files:
            tar = nil
            try? FileManager.default.removeItem(atPath: base)
            try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        }
        lines = try FileHandle(forWritingTo: URL(fileURLWithPath: linesPath))
    }

    func add(members: [DatasetMember], line: Data) throws {
        if layout == .files {
            // Files of their own: written outside the lock, as they share nothing.
            for member in members { try writeWhole(member.data, to: base + "/" + member.name) }
        }
        try lock.withLock {
            try tar?.append(members)
            pendingLines.append(line)
            if pendingLines.count >= Self.linesBatch { try writePendingLines() }
        }
    }

    func complete(table: Data, stats: Data) throws {
        try lock.withLock {
            try tar?.finish()
            try writePendingLines()
            try lines.synchronize()
            try lines.close()
        }
        try writeWhole(table, to: base + ".parquet")
        for suffix in [".jsonl"] + (tar == nil ? [] : [".tar"]) {
            let partial = base + suffix + ".partial"
            guard rename(partial, base + suffix) == 0 else {
                throw CommandFailure("cannot rename \(partial): \(String(cString: strerror(errno)))")
            }
        }
        try writeWhole(stats, to: base + "_stats.json")
    }

    /// Under `lock`.
    private func writePendingLines() throws {
        try lines.write(contentsOf: pendingLines)
        pendingLines.removeAll(keepingCapacity: true)
    }

    func abandon() {
        lock.withLock {
            tar?.abandon()
            try? lines.close()
        }
    }
}
