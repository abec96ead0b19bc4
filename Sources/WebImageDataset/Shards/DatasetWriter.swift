package import Foundation
package import WebImage
package import WebImageCore

/// `prefetch --output-format files|webdataset|parquet`: samples in shards laid out as img2dataset
/// lays them out (its `writer.py` and `logger.py` are the reference), so that its readers and the
/// webdataset loaders take them as they are.
///
/// Shard after shard of `shardSize` rows, in list order, named with five digits (`00000`):
/// - `webdataset`: `00000.tar` holding `KEY.jpg` (the encode format), `KEY.txt` (the caption,
///   with a caption column) and `KEY.json` (the record) side by side for each success;
/// - `files`: a folder `00000/` holding the same three files per success;
/// - `parquet`: no files per sample: the images are a binary column of the table, named by the
///   encode format (`jpg`), after the record's columns, null for a failure (img2dataset's
///   `ParquetSampleWriter`);
/// - all: `00000.parquet`, img2dataset's table of every row's record, failures included;
///   `00000.jsonl`, the same records as lines (which img2dataset does not write: kept, as a
///   line reader needs no Parquet library); and `00000_stats.json` with the shard's counts.
///
/// Keys are img2dataset's: the shard's number times 10^⌈log10 shardSize⌉ plus the row's place in
/// the shard, zero-padded to that many digits plus five (`000010002` is the third row of shard 1
/// with 10,000 rows a shard).
///
/// The shards go to a ``DatasetDestination`` (a folder or a bucket's prefix), whose rule is that
/// a shard's `_stats.json` comes last, when everything else of it is whole; img2dataset's
/// incremental mode and a rerun here both take a shard with a `_stats.json` as done, so a crash
/// never leaves a torn shard counted as done. With `--shard I/N`, this run's shards are
/// numbered I, I+N, I+2N, ...: the outputs of the N runs merge without a clash.
package final class DatasetWriter: Sendable {

    package enum Layout: String {
        case files, webdataset, parquet
    }

    /// How a row ended, as img2dataset's `status` field spells it.
    package enum Status: String {
        case success
        case failedToDownload = "failed_to_download"
        case failedToResize = "failed_to_resize"
        /// `--dedup`: the same bytes as an earlier row of the run (img2dataset has no dedup).
        case duplicate
    }

    /// One row's outcome.
    package struct Sample {
        package var position: Int
        package var status: Status
        /// The error, or nil for a success (it also names the row in the stats' `status_dict`).
        package var error: String?
        /// The image to write, for a success.
        package var image: Data?
        package var fileExtension = "jpg"
        /// The caption to write as `KEY.txt`, with a caption column ("" when the row has none).
        package var caption: String?
        /// The record, img2dataset's fields in its order.
        package var record: JSONValue

        /// A row's outcome: a failure until its fields say otherwise.
        package init(
            position: Int, status: Status, error: String? = nil, image: Data? = nil, fileExtension: String = "jpg",
            caption: String? = nil, record: JSONValue
        ) {
            (self.position, self.status, self.error, self.image) = (position, status, error, image)
            (self.fileExtension, self.caption, self.record) = (fileExtension, caption, record)
        }
    }

    /// A shard this run has rows in and has not completed.
    private struct OpenShard {
        /// Opened once, by the shard's first row; the rows arriving meanwhile wait for it.
        /// A task, not the first row's own work, so that every row of the shard can await one
        /// opening without a hand-made list of waiters.
        var output: Task<any DatasetShardOutput, any Error>
        var written = 0
        var counts: [Status: Int] = [:]
        var statusCounts: [String: Int] = [:]
        let start = Date()
    }

    private struct State {
        var open: [Int: OpenShard] = [:]
        /// The rows of the run, once the list has ended.
        var total: Int?
    }

    package let destination: any DatasetDestination
    package let layout: Layout
    /// The image column's name in the `parquet` layout: the encode format's extension (`jpg`).
    package let imageColumn: String
    package let shardSize: Int
    /// Digits of a row's place in its shard: ⌈log10 shardSize⌉ (img2dataset's
    /// `oom_sample_per_shard`).
    package let sampleDigits: Int
    /// Digits of a shard's number (img2dataset's `oom_shard_count`, default 5).
    package static let shardDigits = 5
    private let slice: ListSlice
    /// The shards an earlier run finished, read once when the run starts.
    private let finished: Set<Int>
    /// Small bookkeeping, changed in place; the writing itself is the destination's.
    private let state = Locked(State())

    private init(
        destination: any DatasetDestination, layout: Layout, imageColumn: String, shardSize: Int, slice: ListSlice,
        finished: Set<Int>
    ) {
        self.destination = destination
        self.layout = layout
        self.imageColumn = imageColumn
        self.shardSize = shardSize
        self.slice = slice
        self.finished = finished
        sampleDigits = Int(log10(Double(shardSize)).rounded(.up))
    }

    /// A writer into `destination`, knowing which shards an earlier run finished there.
    package static func open(
        _ destination: any DatasetDestination, layout: Layout, imageColumn: String = "jpg", shardSize: Int,
        slice: ListSlice
    ) async throws -> DatasetWriter {
        DatasetWriter(
            destination: destination, layout: layout, imageColumn: imageColumn, shardSize: shardSize, slice: slice,
            finished: try await destination.finishedShards())
    }

    /// The number of the shard holding this run's `position`-th row.
    package func shardNumber(forPosition position: Int) -> Int {
        position / shardSize * slice.count + slice.index
    }

    /// A shard's name: its number with five digits.
    package func shardName(_ number: Int) -> String {
        String(number).leftPadded(to: Self.shardDigits)
    }

    /// Whether the row at `position` is in a shard an earlier run finished.
    package func isWritten(position: Int) -> Bool {
        finished.contains(shardNumber(forPosition: position))
    }

    /// The key of this run's `position`-th row (img2dataset's `compute_key`).
    package func key(forPosition position: Int) -> String {
        var power = 1
        for _ in 0..<sampleDigits { power *= 10 }
        let key = shardNumber(forPosition: position) * power + position % shardSize
        return String(key).leftPadded(to: sampleDigits + Self.shardDigits)
    }

    /// Adds one row's outcome; completes its shard when it is the shard's last.
    package func add(_ sample: Sample) async throws {
        let shard = sample.position / shardSize
        let opening = state.withLock { state in
            if let open = state.open[shard] { return open.output }
            let number = shardNumber(forPosition: sample.position)
            let output = Task { [destination, layout, imageColumn] in
                try await destination.openShard(shardName(number), layout: layout, imageColumn: imageColumn)
            }
            state.open[shard] = OpenShard(output: output)
            return output
        }
        let output = try await opening.value
        let stem = sample.record["key"]?.text ?? key(forPosition: sample.position)
        let members =
            layout == .parquet
            ? []
            : sample.image.map { image in
                [DatasetMember(name: stem + "." + sample.fileExtension, data: image)]
                    + (sample.caption.map { [DatasetMember(name: stem + ".txt", data: Data($0.utf8))] } ?? [])
                    + [DatasetMember(name: stem + ".json", data: Data(sample.record.serialized(indent: 4).utf8))]
            } ?? []
        try await output.add(
            DatasetShardRow(
                members: members, record: sample.record, line: Data((sample.record.serialized() + "\n").utf8),
                image: layout == .parquet ? sample.image : nil))
        let completed = state.withLock { state -> OpenShard? in
            state.open[shard]?.written += 1
            state.open[shard]?.counts[sample.status, default: 0] += 1
            state.open[shard]?.statusCounts[sample.error ?? "success", default: 0] += 1
            return Self.takeIfComplete(shard, from: &state, shardSize: shardSize)
        }
        if let completed { try await complete(completed) }
    }

    /// Says how many rows this run took, which completes the last shard.
    package func finish(total: Int) async throws {
        let (completed, incomplete) = state.withLock { state in
            state.total = total
            let completed = state.open.keys.sorted().compactMap { Self.takeIfComplete($0, from: &state, shardSize: shardSize) }
            return (completed, state.open.keys.sorted())
        }
        for shard in completed { try await complete(shard) }
        guard incomplete.isEmpty else { throw DatasetError("shards \(incomplete) are incomplete at the end of the list") }
    }

    /// Gives up the shards still open (the run failed): what their destination can drop now is.
    package func abandon() async {
        let open = state.withLock { state in
            defer { state.open = [:] }
            return Array(state.open.values)
        }
        for shard in open { await (try? await shard.output.value)?.abandon() }
    }

    /// Removes and returns a shard whose every row is in.
    private static func takeIfComplete(_ shard: Int, from state: inout State, shardSize: Int) -> OpenShard? {
        guard let current = state.open[shard] else { return nil }
        let expected = state.total.map { min(shardSize, $0 - shard * shardSize) } ?? shardSize
        guard current.written == expected else { return nil }
        state.open[shard] = nil
        return current
    }

    /// Completes a shard taken out of the open ones (its output opened long since).
    private func complete(_ shard: OpenShard) async throws {
        try await shard.output.value.complete(stats: Data(stats(of: shard).serialized(indent: 4).utf8))
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
