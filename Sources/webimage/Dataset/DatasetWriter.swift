import Foundation
import WebImage

/// `prefetch --output-format files|webdataset`: samples in shards laid out as img2dataset lays
/// them out (its `writer.py` and `logger.py` are the reference), so that its readers and the
/// webdataset loaders take them as they are.
///
/// Shard after shard of `shardSize` rows, in list order, named with five digits (`00000`):
/// - `webdataset`: `00000.tar` holding `KEY.jpg` (the encode format), `KEY.txt` (the caption,
///   with a caption column) and `KEY.json` (the record) side by side for each success;
/// - `files`: a folder `00000/` holding the same three files per success;
/// - both: `00000.jsonl` with the record of every row, failures included (img2dataset writes
///   that table as `00000.parquet`; there is no Parquet writer here), and `00000_stats.json`
///   with the shard's counts.
///
/// Keys are img2dataset's: the shard's number times 10^⌈log10 shardSize⌉ plus the row's place in
/// the shard, zero-padded to that many digits plus five (`000010002` is the third row of shard 1
/// with 10,000 rows a shard).
///
/// A shard is written under temporary names (`.partial`, or a folder emptied when it is
/// opened again) and its `_stats.json` comes last, when its last row is in; img2dataset's
/// incremental mode and a rerun here both take a shard with a `_stats.json` as done, so a crash
/// never leaves a torn shard counted as done. With `--shard I/N`, this run's shards are
/// numbered I, I+N, I+2N, ...: the directories of the N runs merge without a clash.
final class DatasetWriter: @unchecked Sendable {
    // @unchecked: every mutable field is behind `lock`.

    enum Layout: String {
        case files, webdataset
    }

    /// How a row ended, as img2dataset's `status` field spells it.
    enum Status: String {
        case success
        case failedToDownload = "failed_to_download"
        case failedToResize = "failed_to_resize"
        /// `--dedup`: the same bytes as an earlier row of the run (img2dataset has no dedup).
        case duplicate
    }

    /// One row's outcome.
    struct Sample {
        var position: Int
        var status: Status
        /// The error, or nil for a success (it also names the row in the stats' `status_dict`).
        var error: String?
        /// The image to write, for a success.
        var image: Data?
        var fileExtension = "jpg"
        /// The caption to write as `KEY.txt`, with a caption column ("" when the row has none).
        var caption: String?
        /// The record, img2dataset's fields in its order.
        var record: JSONValue
    }

    private struct OpenShard {
        var tar: TarWriter?
        var lines: FileHandle
        var written = 0
        var counts: [Status: Int] = [:]
        var statusCounts: [String: Int] = [:]
        let start = Date()
    }

    let directory: URL
    let layout: Layout
    let shardSize: Int
    /// Digits of a row's place in its shard: ⌈log10 shardSize⌉ (img2dataset's
    /// `oom_sample_per_shard`).
    let sampleDigits: Int
    /// Digits of a shard's number (img2dataset's `oom_shard_count`, default 5).
    static let shardDigits = 5
    private let slice: (index: Int, count: Int)
    private let lock = NSLock()
    private var open: [Int: OpenShard] = [:]
    private var total: Int?

    init(directory: URL, layout: Layout, shardSize: Int, slice: (index: Int, count: Int)) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.directory = directory
        self.layout = layout
        self.shardSize = shardSize
        self.slice = slice
        sampleDigits = Int(log10(Double(shardSize)).rounded(.up))
    }

    /// The number of the shard holding this run's `position`-th row.
    func shardNumber(forPosition position: Int) -> Int {
        position / shardSize * slice.count + slice.index
    }

    /// A shard's name: its number with five digits.
    func shardName(_ number: Int) -> String {
        String(number).leftPadded(to: Self.shardDigits)
    }

    /// Whether the row at `position` is in a shard an earlier run finished.
    func isWritten(position: Int) -> Bool {
        FileManager.default.fileExists(atPath: statsPath(shardNumber(forPosition: position)))
    }

    /// The key of this run's `position`-th row (img2dataset's `compute_key`).
    func key(forPosition position: Int) -> String {
        var power = 1
        for _ in 0..<sampleDigits { power *= 10 }
        let key = shardNumber(forPosition: position) * power + position % shardSize
        return String(key).leftPadded(to: sampleDigits + Self.shardDigits)
    }

    /// Adds one row's outcome; completes its shard when it is the shard's last.
    func add(_ sample: Sample) throws {
        let shard = sample.position / shardSize
        let number = shardNumber(forPosition: sample.position)
        try lock.withLock { if open[shard] == nil { open[shard] = try openShard(number) } }
        let stem = sample.record["key"]?.text ?? key(forPosition: sample.position)
        let members = sample.image.map { image in
            [(stem + "." + sample.fileExtension, image)] + (sample.caption.map { [(stem + ".txt", Data($0.utf8))] } ?? [])
                + [(stem + ".json", Data(sample.record.serialized(indent: 4).utf8))]
        }
        if layout == .files, let members {
            // Files of their own: written outside the lock, as they share nothing.
            let folder = directory.appendingPathComponent(shardName(number))
            for (name, data) in members { try writeWhole(data, to: folder.appendingPathComponent(name).path) }
        }
        try lock.withLock {
            guard var current = open[shard] else { return }
            if let tar = current.tar, let members {
                for (name, data) in members { try tar.append(name: name, data: data) }
            }
            try current.lines.write(contentsOf: Data((sample.record.serialized() + "\n").utf8))
            current.written += 1
            current.counts[sample.status, default: 0] += 1
            current.statusCounts[sample.error ?? "success", default: 0] += 1
            open[shard] = current
            try closeIfComplete(shard)
        }
    }

    /// Says how many rows this run took, which completes the last shard.
    func finish(total: Int) throws {
        try lock.withLock {
            self.total = total
            for shard in open.keys.sorted() { try closeIfComplete(shard) }
            guard open.isEmpty else {
                throw CommandFailure("shards \(open.keys.sorted()) are incomplete at the end of the list")
            }
        }
    }

    private func path(_ number: Int, _ suffix: String) -> String {
        directory.appendingPathComponent(shardName(number) + suffix).path
    }

    private func statsPath(_ number: Int) -> String { path(number, "_stats.json") }

    private func openShard(_ number: Int) throws -> OpenShard {
        let lines = path(number, ".jsonl.partial")
        guard FileManager.default.createFile(atPath: lines, contents: nil) else { throw CommandFailure("cannot create \(lines)") }
        var tar: TarWriter?
        switch layout {
        case .webdataset:
            tar = try TarWriter(path: path(number, ".tar.partial"))
        case .files:
            // What a run that stopped in this shard left is written again from the start.
            let folder = path(number, "")
            try? FileManager.default.removeItem(atPath: folder)
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        return OpenShard(tar: tar, lines: try FileHandle(forWritingTo: URL(fileURLWithPath: lines)))
    }

    /// Closes a shard whose every row is in: the `.jsonl` and the `.tar` renamed to their names,
    /// then the stats, which mark it done.
    private func closeIfComplete(_ shard: Int) throws {
        guard let current = open[shard] else { return }
        let expected = total.map { min(shardSize, $0 - shard * shardSize) } ?? shardSize
        guard current.written == expected else { return }
        open[shard] = nil
        let number = shardNumber(forPosition: shard * shardSize)
        try current.tar?.finish()
        try current.lines.synchronize()
        try current.lines.close()
        for suffix in [".jsonl"] + (current.tar == nil ? [] : [".tar"]) {
            let partial = path(number, suffix + ".partial")
            guard rename(partial, path(number, suffix)) == 0 else {
                throw CommandFailure("cannot rename \(partial): \(String(cString: strerror(errno)))")
            }
        }
        try writeWhole(Data(stats(of: current).serialized(indent: 4).utf8), to: statsPath(number))
    }

    /// img2dataset's `write_stats`: the counts, the times as seconds since 1970, and how many
    /// rows ended with each error (or "success").
    private func stats(of shard: OpenShard) -> JSONValue {
        let end = Date()
        var members: [JSONValue.Member] = [
            .init(name: "count", value: .integer(Int64(shard.written))),
            .init(name: "successes", value: .integer(Int64(shard.counts[.success] ?? 0))),
            .init(name: "failed_to_download", value: .integer(Int64(shard.counts[.failedToDownload] ?? 0))),
            .init(name: "failed_to_resize", value: .integer(Int64(shard.counts[.failedToResize] ?? 0))),
        ]
        if let duplicates = shard.counts[.duplicate] { members.append(.init(name: "duplicates", value: .integer(Int64(duplicates)))) }
        members += [
            .init(name: "duration", value: .number(end.timeIntervalSince(shard.start))),
            .init(name: "start_time", value: .number(shard.start.timeIntervalSince1970)),
            .init(name: "end_time", value: .number(end.timeIntervalSince1970)),
            .init(
                name: "status_dict",
                value: .object(
                    shard.statusCounts.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map {
                        .init(name: $0.key, value: .integer(Int64($0.value)))
                    })),
        ]
        return .object(members)
    }
}
