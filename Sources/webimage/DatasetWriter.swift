import Foundation
import WebImage

/// `prefetch --output-format tar`: samples in tar shards, as img2dataset and webdataset lay them
/// out. Shard after shard of `shardSize` URLs (in list order): `00000.tar` holds `KEY.jpg` (or the
/// written format) and `KEY.json` for each image that loaded, the two members of a sample side by
/// side, and `00000.jsonl` beside it has one line per URL of the shard, failures included.
///
/// A shard is written as `NNNNN.tar.partial` and `NNNNN.jsonl.partial` and renamed when its last
/// URL is done (the `.jsonl` first, the `.tar` last), so a shard under its final name is whole, and
/// a rerun after a crash skips exactly the URLs of the shards that exist and redoes the others.
/// With `--shard I/N`, this run's shards are numbered I, I+N, I+2N, ...: the directories of the N
/// runs merge without a clash. Keys are the URL's line number in the whole list (`000000042`).
final class DatasetWriter: @unchecked Sendable {
    // @unchecked: every mutable field is behind `lock`, and the files are written under it.

    /// What one URL gave.
    struct Record: Codable, Equatable {
        var key: String
        var url: String
        var status: String
        var finalURL: String?
        var error: String?
        var format: String?
        var width: Int?
        var height: Int?
        var originalWidth: Int?
        var originalHeight: Int?
        var bytes: Int?
    }

    private struct OpenShard {
        var tar: TarWriter
        var lines: FileHandle
        var written = 0
    }

    let directory: URL
    let shardSize: Int
    private let slice: (index: Int, count: Int)
    private let finished: Set<String>
    private let lock = NSLock()
    private var open: [Int: OpenShard] = [:]
    private var total: Int?
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    init(directory: URL, shardSize: Int, slice: (index: Int, count: Int)) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.directory = directory
        self.shardSize = shardSize
        self.slice = slice
        finished = Set(try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".tar") })
    }

    /// The file name (without extension) of the shard holding this run's `position`-th URL.
    func shardName(forPosition position: Int) -> String {
        String(format: "%05d", position / shardSize * slice.count + slice.index)
    }

    /// Whether the URL at `position` is in a shard an earlier run finished.
    func isWritten(position: Int) -> Bool {
        finished.contains(shardName(forPosition: position) + ".tar")
    }

    /// The key of the URL on line `index` (counting URLs only) of the whole list.
    static func key(forIndex index: Int) -> String {
        String(format: "%09d", index)
    }

    /// Adds the outcome of the URL at `position`: its image (nil when it failed) and its record.
    func add(position: Int, image: Data?, extension fileExtension: String?, record: Record) throws {
        let json = try encoder.encode(record)
        try lock.withLock {
            let shard = position / shardSize
            var current = try open[shard] ?? openShard(shard, position: position)
            if let image, let fileExtension {
                try current.tar.append(name: record.key + "." + fileExtension, data: image)
                try current.tar.append(name: record.key + ".json", data: json)
            }
            try current.lines.write(contentsOf: json + Data("\n".utf8))
            current.written += 1
            open[shard] = current
            try closeIfComplete(shard)
        }
    }

    /// Says how many URLs this run took, which completes the last shard.
    func finish(total: Int) throws {
        try lock.withLock {
            self.total = total
            for shard in open.keys.sorted() { try closeIfComplete(shard) }
            guard open.isEmpty else {
                throw CommandFailure("shards \(open.keys.sorted()) are incomplete at the end of the list")
            }
        }
    }

    private func openShard(_ shard: Int, position: Int) throws -> OpenShard {
        let name = shardName(forPosition: position)
        let lines = directory.appendingPathComponent(name + ".jsonl.partial")
        guard FileManager.default.createFile(atPath: lines.path, contents: nil) else { throw CommandFailure("cannot create \(lines.path)") }
        return OpenShard(
            tar: try TarWriter(path: directory.appendingPathComponent(name + ".tar.partial").path),
            lines: try FileHandle(forWritingTo: lines))
    }

    /// Renames a shard whose every URL is in: the `.jsonl`, then the `.tar`, which marks it done.
    private func closeIfComplete(_ shard: Int) throws {
        guard let current = open[shard] else { return }
        let expected = total.map { min(shardSize, $0 - shard * shardSize) } ?? shardSize
        guard current.written == expected else { return }
        open[shard] = nil
        try current.tar.finish()
        try current.lines.synchronize()
        try current.lines.close()
        let name = shardName(forPosition: shard * shardSize)
        for kind in ["jsonl", "tar"] {
            let partial = directory.appendingPathComponent("\(name).\(kind).partial").path
            guard rename(partial, directory.appendingPathComponent("\(name).\(kind)").path) == 0 else {
                throw CommandFailure("cannot rename \(partial): \(String(cString: strerror(errno)))")
            }
        }
    }
}
