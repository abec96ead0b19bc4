import ArgumentParser
import Foundation
import WebImage

/// `webimage prefetch`: warms the cache from a list of URLs, N at a time.
struct PrefetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefetch",
        abstract: "Warm the cache from a list of URLs (or save them into a directory), N at a time.",
        discussion: """
            The list has one URL per line; blank lines and lines starting with # are ignored. \
            URLs already cached (and, with -o, already saved) count as skipped, so a rerun \
            resumes where the last one stopped. On a terminal a progress bar shows on stderr \
            (done/total, images per second, bytes, failures, ETA); otherwise a plain progress \
            line every few seconds. A summary ends the run; with --json it is a JSON object on \
            stdout (fields: total, succeeded, failed, skipped, bytes, seconds, imagesPerSecond).

            Examples:
              webimage prefetch -i urls.txt -j 16
              cat urls.txt | webimage prefetch -i - --thumbnail 256x256 -o thumbs/ --json
              webimage prefetch -i urls.txt -j 32 --per-host 4 --per-host-rate 10 --block-private-addresses
              webimage prefetch -i urls.txt --shard 2/8 -o images/   # the third of eight machines

            With --shard I/N the run takes only the URLs whose stable hash (FNV-1a of the URL's \
            text) falls in slice I of N, whatever their order in the list: N runs over the same \
            list, on one machine or many, share the work with no coordinator and no URL twice. \
            File names in -o are chosen over the whole list, so the N directories merge into one. \
            The list is read a block at a time, never whole. See docs/crawling.md.

            With -o DIR --output-format tar the images go into shards for datasets, as \
            img2dataset and webdataset lay them out: NNNNN.tar with KEY.ext and KEY.json per image \
            (KEY is the URL's index in the list) and NNNNN.jsonl with a line per URL, failures \
            included. A shard appears under its name only when whole; a rerun skips finished \
            shards.
              webimage prefetch -i urls.txt -j 32 -o dataset/ --output-format tar --no-cache
            """
    )

    @Option(name: .shortAndLong, help: ArgumentHelp("The URL list; - for stdin.", valueName: "FILE"))
    var input: String = "-"

    @Option(name: .short, help: ArgumentHelp("How many images load at once.", valueName: "N"))
    var jobs: Int = 8

    @Option(help: ArgumentHelp("At most N downloads at once from one host; hosts take turns (default: no per-host limit).", valueName: "N"))
    var perHost: Int?

    @Option(help: ArgumentHelp("At most R downloads started per second from one host.", valueName: "R"))
    var perHostRate: Double?

    @OptionGroup var cache: CacheOptions
    @OptionGroup var shaping: ImageShapingOptions
    @OptionGroup(title: "Network") var network: NetworkOptions

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp("Also save each image into this directory (in its source format unless --format).", valueName: "DIR"))
    var output: String?

    @Option(help: ArgumentHelp("With -o: files (one per image) or tar (shards of samples for datasets).", valueName: "FORMAT"))
    var outputFormat: String = "files"

    @Option(help: ArgumentHelp("With --output-format tar: URLs per shard (default 10000).", valueName: "N"))
    var shardSize: Int = 10_000

    @Option(help: ArgumentHelp("With -o: write images as \(ImageOutput.formatNames).", valueName: "FORMAT"))
    var format: String?

    @OptionGroup(title: "Encoding") var encoding: EncodingOptions

    @Flag(help: "With -o: keep the images only there, not in the disk cache too (a rerun fetches what the output lacks).")
    var noCache = false

    @Flag(help: "Exit 0 even when some URLs failed.")
    var allowFailures = false

    @Option(
        name: .customLong("shard"),
        help: ArgumentHelp("Take only slice I of N of the list (0 ≤ I < N), by a stable hash of each URL.", valueName: "I/N"))
    var shardText: String?

    @Option(help: .hidden)
    var progressInterval: Double = 2

    @OptionGroup var outputOptions: OutputOptions

    func validate() throws {
        guard (1...256).contains(jobs) else { throw ValidationError("-j takes 1 to 256, not \(jobs)") }
        if let perHost, perHost < 1 { throw ValidationError("--per-host takes a whole number from 1, not \(perHost)") }
        if let perHostRate, !(perHostRate > 0) { throw ValidationError("--per-host-rate takes a positive number, not \(perHostRate)") }
        guard progressInterval > 0 else { throw ValidationError("--progress-interval must be positive") }
        try shaping.check()
        try encoding.check()
        _ = try ImageOutput.parseFormat(format)
        _ = try shard()
        guard ["files", "tar"].contains(outputFormat) else {
            throw ValidationError("--output-format takes files or tar, not \(outputFormat)")
        }
        if outputFormat == "tar", output == nil { throw ValidationError("--output-format tar needs -o DIR") }
        if noCache, output == nil { throw ValidationError("--no-cache needs -o DIR: without it nothing would be kept") }
        guard shardSize >= 1 else { throw ValidationError("--shard-size takes a whole number from 1, not \(shardSize)") }
    }

    /// Which slice of the list this run takes: (index, count), or nil for all of it. Read as
    /// text and checked here, as ``ImageShapingOptions`` reads its options.
    private func shard() throws -> (index: Int, count: Int)? {
        guard let shardText else { return nil }
        let parts = shardText.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1, (0..<count).contains(index) else {
            throw ValidationError("--shard takes I/N with 0 ≤ I < N, not \"\(shardText)\"")
        }
        return (index, count)
    }

    /// The slice of N a URL belongs to: FNV-1a (64-bit) of its text modulo N, the same on every
    /// machine and in every order of the list.
    static func slice(of url: String, count: Int) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in url.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return Int(hash % UInt64(count))
    }

    /// Per-host limits, when either option asks for them; a 429 or 503 with `Retry-After` then
    /// also holds that host's queue.
    private var politeness: HostPoliteness? {
        guard perHost != nil || perHostRate != nil else { return nil }
        return HostPoliteness(maximumConcurrentDownloadsPerHost: perHost ?? jobs, requestsPerSecond: perHostRate)
    }

    struct Summary: Encodable {
        var total: Int
        var succeeded: Int
        var failed: Int
        var skipped: Int
        var bytes: Int64
        var seconds: Double
        var imagesPerSecond: Double
    }

    /// What a run shares between its loads.
    private struct Run {
        let session: LoadSession
        let context: LoadContext
        let writer: ImageOutput
        let counts: PrefetchCounts
        let reporter: ProgressReporter
    }

    func run() async throws {
        outputOptions.bootstrapLogging()
        let session = try LoadSession(cache: cache, memoryOnly: false, network: network, concurrency: jobs, politeness: politeness)
        let counts = PrefetchCounts()
        let reporter = ProgressReporter(
            total: try countSelected(), counts: counts, isTerminal: ProgressReporter.stderrIsTerminal,
            interval: .milliseconds(Int64(progressInterval * 1000)))
        let run = Run(
            session: session, context: try loadContext(),
            writer: ImageOutput(format: try ImageOutput.parseFormat(format), options: encoding.options()),
            counts: counts, reporter: reporter)
        let display = Task { await reporter.run() }
        let start = ContinuousClock.now
        let total: Int
        do {
            if outputFormat == "tar" {
                total = try await saveDataset(run: run)
            } else if let output {
                total = try await saveFiles(into: output, run: run)
            } else {
                total = try await streamList { text, _, _ in { await prefetch(text, name: "", directory: nil, run: run) } }
            }
        } catch {
            display.cancel()
            try? await session.shutdown()
            throw error
        }
        display.cancel()
        _ = await display.value
        reporter.clear()
        try await session.shutdown()
        let seconds = (ContinuousClock.now - start).milliseconds / 1000
        let final = counts.snapshot
        let summary = Summary(
            total: total, succeeded: final.succeeded, failed: final.failed, skipped: final.skipped,
            bytes: final.bytes, seconds: seconds, imagesPerSecond: seconds > 0 ? Double(final.done) / seconds : 0)
        if outputOptions.json {
            print(jsonLine(summary))
        } else {
            print(
                "\(summary.total) URLs: \(summary.succeeded) loaded, \(summary.skipped) skipped, \(summary.failed) failed, "
                    + "\(ProgressReporter.megabytes(summary.bytes)) in \(String(format: "%.2f", seconds)) s (\(String(format: "%.1f", summary.imagesPerSecond)) images/s)"
            )
        }
        if final.failed > 0 && !allowFailures { throw ExitCode.failure }
    }

    /// `-o DIR` with `--output-format files`: the list streamed into the cache and a file per
    /// image. Names are chosen over every line, this run's slice or not, so that the directories
    /// of N shards merge into one; returns how many URLs this run took.
    private func saveFiles(into path: String, run: Run) async throws -> Int {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let directory = URL(fileURLWithPath: path, isDirectory: true)
        var namer = FileNamer()
        var name = ""
        return try await streamList(
            everyLine: { text, index in name = namer.name(for: text, index: index) },
            { text, _, _ in
                let fileName = name
                return { await prefetch(text, name: fileName, directory: directory, run: run) }
            })
    }

    /// Runs the work `next` hands out, `jobs` at a time, until it hands out nil.
    private func runBounded(_ next: () throws -> (@Sendable () async throws -> Void)?) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            var running = 0
            while let work = try next() {
                if running == jobs {
                    try await group.next()
                    running -= 1
                }
                group.addTask(operation: work)
                running += 1
            }
            try await group.waitForAll()
        }
    }

    private func prefetch(_ text: String, name: String, directory: URL?, run: Run) async {
        guard let url = URL(string: text), url.scheme != nil else {
            run.counts.update { $0.failed += 1 }
            run.reporter.message("webimage: \(text): not a URL")
            return
        }
        let target = directory?.appendingPathComponent(fileName(name, format: run.writer.format), isDirectory: false)
        let cached = noCache || run.session.cache.diskImageExists(for: run.session.manager.variantKey(for: url, context: run.context))
        if cached, target.map({ FileManager.default.fileExists(atPath: $0.path) }) ?? true {
            run.counts.update { $0.skipped += 1 }
            return
        }
        do {
            let result = try await load(url, run: run)
            if let target { try await Self.write(encoded(result, run: run).bytes, to: target) }
            run.counts.update {
                $0.succeeded += 1
                $0.bytes += Int64(result.data?.count ?? 0)
            }
        } catch {
            run.counts.update { $0.failed += 1 }
            run.reporter.message("webimage: \(text): \(error)")
        }
    }

    /// Where output files are written, off the cooperative pool as the image cache's disk writes
    /// are: creating a file blocks its thread for 0.5 to 0.8 ms on this project's disk.
    private static let fileQueue = DispatchQueue(label: "webimage.prefetch.files", qos: .utility, attributes: .concurrent)

    /// Writes `NAME.partial` and renames it, so that a file under its name is whole and a rerun
    /// after a crash redoes what was cut short. No fsync: `Data.write(to:)` syncs every file,
    /// which took a third of the time of 3,000 small images (`strace -c`), and a dataset is
    /// rebuilt by a rerun, not recovered from a power loss.
    private static func write(_ bytes: Data, to target: URL) async throws {
        let result: Result<Void, WebImageError> = await withCheckedContinuation { continuation in
            fileQueue.async {
                continuation.resume(
                    returning: Result { () throws(WebImageError) in
                        let partial = target.path + ".partial"
                        let descriptor = try FileSystem.open(partial, O_WRONLY | O_CREAT | O_TRUNC)
                        defer { close(descriptor) }
                        try bytes.withTypedBytes { raw throws(WebImageError) in try FileSystem.writeAll(descriptor, raw, path: partial) }
                        try FileSystem.rename(partial, target.path)
                    })
            }
        }
        try result.get()
    }

    /// A name from the URL, with the extension of `--format` when one is given.
    private func fileName(_ name: String, format: ImageFormat?) -> String {
        guard let format else { return name }
        return URL(fileURLWithPath: name).deletingPathExtension().lastPathComponent + "." + format.preferredFileExtension
    }

    /// The bytes to write for a loaded image: the original, untouched, unless a thumbnail, a
    /// transform, `--format` or an encoding option asks for an encoding.
    private func encoded(_ result: ImageResult, run: Run) throws -> (bytes: Data, format: ImageFormat) {
        let untouched = run.context.imageTransformer == nil && run.context.imageThumbnailPixelSize == nil
        let sourceFormat = result.image?.sourceFormat ?? result.data.flatMap { ImageFormat(sniffing: [UInt8]($0)) }
        return try run.writer.bytes(for: result.image, original: untouched ? result.data : nil, sourceFormat: sourceFormat, path: nil)
    }

    /// Whether images are written as their original bytes (no shaping, no format, no encoding).
    private func writesOriginals(_ run: Run) -> Bool {
        run.context.imageTransformer == nil && run.context.imageThumbnailPixelSize == nil && run.writer.format == nil
            && run.writer.options == nil
    }

    // MARK: - Datasets

    /// `--output-format tar`: the list streamed line by line into shards; returns how many
    /// URLs this run took (its slice of the list).
    private func saveDataset(run: Run) async throws -> Int {
        let dataset = try DatasetWriter(
            directory: URL(fileURLWithPath: output ?? ".", isDirectory: true), shardSize: shardSize, slice: try shard() ?? (0, 1))
        let total = try await streamList { text, index, place in
            if dataset.isWritten(position: place) {
                run.counts.update { $0.skipped += 1 }
                return nil
            }
            let key = DatasetWriter.key(forIndex: index)
            return { try await sample(text, key: key, position: place, dataset: dataset, run: run) }
        }
        try dataset.finish(total: total)
        return total
    }

    /// Reads the list a block at a time and runs this run's slice of it, `jobs` at a time, never
    /// holding the list: `job` gets each URL with its index among the list's URLs and its place
    /// in this run, and returns the work to do, or nil to skip it. Returns how many URLs the run
    /// took.
    /// `everyLine` sees each URL of the list, in this run's slice or not, with its index.
    private func streamList(
        everyLine: (String, Int) -> Void = { _, _ in }, _ job: (String, Int, Int) -> (@Sendable () async throws -> Void)?
    ) async throws -> Int {
        let reader = try URLListReader(path: input)
        let slice = try shard()
        var index = -1
        var position = 0
        try await runBounded {
            while let text = try reader.next() {
                index += 1
                everyLine(text, index)
                if let slice, Self.slice(of: text, count: slice.count) != slice.index { continue }
                position += 1
                if let work = job(text, index, position - 1) { return work }
            }
            return nil
        }
        return position
    }

    /// Loads one URL into the cache (unless `--no-cache`). Images kept as they came are checked by
    /// their header alone, as img2dataset does without re-encoding: decoding 10,000 50 KB JPEGs
    /// took a fifth of a run. Bytes whose header is not an image's are a failure and leave the
    /// cache again.
    private func load(_ url: URL, run: Run) async throws -> ImageResult {
        guard writesOriginals(run) else {
            return try await run.session.manager.image(for: url, options: [.waitStoreCache], context: run.context)
        }
        let result = try await run.session.manager.image(for: url, options: [.waitStoreCache, .avoidDecodeImage], context: run.context)
        do throws(WebImageError) {
            _ = try ImageHeader(data: [UInt8](result.data ?? Data()))
        } catch {
            try? run.session.cache.remove(run.session.manager.variantKey(for: url, context: run.context), fromDisk: true)
            throw error
        }
        return result
    }

    /// Loads one URL and adds it to its shard: the image and its record, or the record of the
    /// failure. Only a failure to write the dataset ends the run.
    private func sample(_ text: String, key: String, position: Int, dataset: DatasetWriter, run: Run) async throws {
        var record = DatasetWriter.Record(key: key, url: text, status: "failed")
        var written: (bytes: Data, format: ImageFormat)?
        do {
            guard let url = URL(string: text), url.scheme != nil else { throw CommandFailure("not a URL") }
            let result = try await load(url, run: run)
            let header = try result.data.map { data throws(WebImageError) in try ImageHeader(data: [UInt8](data)) }
            let output = try encoded(result, run: run)
            record.status = "success"
            record.finalURL = result.finalURL?.absoluteString
            record.format = output.format.rawValue
            record.width = result.image?.pixelWidth ?? header?.width
            record.height = result.image?.pixelHeight ?? header?.height
            record.originalWidth = header?.width
            record.originalHeight = header?.height
            record.bytes = output.bytes.count
            written = output
            run.counts.update {
                $0.succeeded += 1
                $0.bytes += Int64(result.data?.count ?? 0)
            }
        } catch {
            record.error = "\(error)"
            run.counts.update { $0.failed += 1 }
            run.reporter.message("webimage: \(text): \(error)")
        }
        try dataset.add(
            position: position, image: written?.bytes, extension: written?.format.preferredFileExtension, record: record)
    }

    /// How many URLs this run will take, counted without keeping the list (0 for stdin).
    private func countSelected() throws -> Int {
        guard input != "-" else { return 0 }
        let reader = try URLListReader(path: input)
        let slice = try shard()
        var count = 0
        while let text = try reader.next() {
            if let slice, Self.slice(of: text, count: slice.count) != slice.index { continue }
            count += 1
        }
        return count
    }

    /// The shaping options' context, storing on disk only: the process exits when the list is
    /// done, so a decoded image is checked and dropped, never kept in the memory cache (2,000
    /// 50 KB JPEGs held 633 MB of them at the end of a run).
    private func loadContext() throws -> LoadContext {
        var context = try shaping.context()
        // `ImageCacheType.none`, spelled out: `.none` would be the optional's nil, which means "all".
        context.storeCacheType = noCache ? ImageCacheType.none : .disk
        if noCache { context.originalStoreCacheType = ImageCacheType.none }
        return context
    }
}

/// File names for `-o` in files mode, one URL at a time: the URL's last path component, with the
/// URL's place in the list added when an earlier URL took the name. What it keeps is a 64-bit
/// hash of each name given (about 11 bytes a URL, 110 MB for ten million), not the list; the
/// hash is fixed (FNV-1a), so every shard of a list names every URL alike.
struct FileNamer {
    private var used: Set<UInt64> = []

    mutating func name(for text: String, index: Int) -> String {
        let url = URL(string: text) ?? URL(fileURLWithPath: "image")
        let stem = url.deletingPathExtension().lastPathComponent
        let base = stem.isEmpty || stem == "/" ? "image" : stem
        let ext = url.pathExtension.isEmpty ? "img" : url.pathExtension
        var name = "\(base).\(ext)"
        if !used.insert(Self.hash(name)).inserted {
            name = "\(base)-\(index + 1).\(ext)"
            used.insert(Self.hash(name))
        }
        return name
    }

    private static func hash(_ name: String) -> UInt64 {
        name.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01B3 }
    }
}
