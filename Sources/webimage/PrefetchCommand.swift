import ArgumentParser
import Foundation
import WebImage
import WebImageGCS
import WebImageS3
import WebImageServer
import WebImageDataset

/// `webimage prefetch`: warms the cache from a list of URLs, N at a time.
struct PrefetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefetch",
        abstract: "Warm the cache from a list of URLs (or save them into a directory), N at a time.",
        discussion: """
            The list has one URL per line (blank lines and lines starting with # are ignored), or, \
            with --input-format csv, tsv, jsonl or json, a row per image with a URL column. \
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

            Datasets, as img2dataset makes them: a caption list (--input-format csv, tsv, jsonl, \
            json or parquet, gzip too, with --url-col and --caption-col) in, and with \
            --output-format webdataset (or files) shards out: NNNNN.tar (or a folder NNNNN/) with \
            KEY.jpg, KEY.txt and KEY.json per image, NNNNN.parquet and NNNNN.jsonl with every \
            row, failures included, and NNNNN_stats.json; --output-format parquet puts the \
            images in NNNNN.parquet instead. Images are resized by img2dataset's modes \
            (--image-size 256 --resize-mode border by default) and encoded as --encode-format jpg \
            at --encode-quality 95. A shard is done once its _stats.json is written; a rerun skips \
            finished shards. See docs/crawling.md.
              webimage prefetch -i captions.csv --input-format csv --caption-col caption \
                -o dataset/ --output-format webdataset --image-size 256 --resize-mode center_crop --no-cache
            """
    )

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "The URL list: a file (- for stdin), a folder of lists of the --input-format, s3://BUCKET/KEY or gs://BUCKET/OBJECT for one in a bucket, s3://BUCKET/PREFIX/ or gs://BUCKET/PREFIX/ for the lists under a prefix (AWS's or Google's settings). Repeat it to read several lists as one, in order.",
            valueName: "FILE"))
    var input: [String] = []

    /// The lists, standard input when none is named.
    private var lists: [String] { input.isEmpty ? ["-"] : input }

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
        help: ArgumentHelp(
            "Also save each image into this directory (in its source format unless --format); with --output-format files, webdataset or parquet, s3://BUCKET/PREFIX or gs://BUCKET/PREFIX writes the shards to a bucket (AWS's or Google's settings).",
            valueName: "DIR"))
    var output: String?

    @Option(
        help: ArgumentHelp(
            "With -o: named (a file per image, named after its URL; the default), or img2dataset's files, webdataset (tar) or parquet (the images in the shard's table) shards.",
            valueName: "FORMAT"))
    var outputFormat: String?

    @Option(
        name: [.customLong("shard-size"), .customLong("number-sample-per-shard")],
        help: ArgumentHelp("Dataset modes: rows per shard (default 10000).", valueName: "N"))
    var shardSize: Int = 10_000

    @OptionGroup(title: "Datasets (img2dataset's options)") var dataset: DatasetOptions

    @Option(help: ArgumentHelp("With -o: write images as \(ImageOutput.formatNames).", valueName: "FORMAT"))
    var format: String?

    @OptionGroup(title: "Encoding") var encoding: EncodingOptions

    @Flag(help: "With -o: keep the images only there, not in the disk cache too (a rerun fetches what the output lacks).")
    var noCache = false

    @Flag(
        help:
            "Without a dataset layout: exit 0 even when some URLs failed. (A dataset run's failed rows are data, in its records: it exits 0 once every shard is whole.)"
    )
    var allowFailures = false

    @Option(
        help: ArgumentHelp(
            "Dataset modes: exit 1 when the share of rows that succeeded is under R (0 to 1), though every shard is whole.",
            valueName: "R"))
    var minSuccessRate: Double?

    @Option(
        name: .customLong("shard"),
        help: ArgumentHelp(
            "Take only slice I of N of the list (0 ≤ I < N), by a stable hash of each URL (default $JOB_COMPLETION_INDEX/$JOB_COMPLETIONS when both are set).",
            valueName: "I/N"))
    var shardText: String?

    @Option(
        help: ArgumentHelp(
            "The URL schemes the list's rows may use, comma-separated: http, https (the default), data, file, s3. A row of another scheme is refused before anything is read.",
            valueName: "A,B"))
    var allowedURLSchemes: String?

    @Option(help: ArgumentHelp("With s3 in --allowed-url-schemes: the buckets rows may read, comma-separated.", valueName: "A,B"))
    var allowedBuckets: String?

    @Option(help: .hidden)
    var progressInterval: Double = 2

    @Flag(
        help:
            "Only count the rows this run would take (its --shard slice), read from the list as the run reads it, print the number (with --json as {\"rows\":N}) and exit: how a distributor sizes its slices."
    )
    var countRows = false

    @OptionGroup var outputOptions: OutputOptions

    func validate() throws {
        guard (1...256).contains(jobs) else { throw ValidationError("-j takes 1 to 256, not \(jobs)") }
        if let perHost, perHost < 1 { throw ValidationError("--per-host takes a whole number from 1, not \(perHost)") }
        if let perHostRate, !(perHostRate > 0) { throw ValidationError("--per-host-rate takes a positive number, not \(perHostRate)") }
        _ = try flagDuration(progressInterval, "--progress-interval")
        try shaping.check()
        try encoding.check()
        _ = try ImageOutput.parseFormat(format)
        _ = try shard()
        if lists.count > 1, lists.contains("-") { throw ValidationError("standard input (-) is read alone, not beside other lists") }
        if countRows, lists.contains("-") { throw ValidationError("--count-rows reads a list from a file or a bucket, not standard input") }
        do { _ = try rowSchemes() } catch { throw ValidationError(error.description) }
        try dataset.check(lists: lists)
        try cache.check()
        let layout = try datasetLayout()
        if let outputFormat, output == nil { throw ValidationError("--output-format \(outputFormat) needs -o DIR") }
        if layout != nil, shaping.thumbnailText != nil || shaping.transform != nil || format != nil || encoding.options() != nil {
            throw ValidationError(
                "the dataset modes resize and encode by img2dataset's options (--image-size, --resize-mode, --encode-format, --encode-quality), not --thumbnail, --transform, --format or the encoding options"
            )
        }
        if let output, Self.isBucket(output), layout == nil {
            throw ValidationError("-o \(output) writes to a bucket with --output-format files, webdataset or parquet only")
        }
        if noCache, output == nil { throw ValidationError("--no-cache needs -o DIR: without it nothing would be kept") }
        guard shardSize >= 1 else { throw ValidationError("--shard-size takes a whole number from 1, not \(shardSize)") }
        if let minSuccessRate {
            guard (0...1).contains(minSuccessRate) else { throw ValidationError("--min-success-rate takes 0 to 1, not \(minSuccessRate)") }
            guard layout != nil else { throw ValidationError("--min-success-rate needs --output-format files, webdataset or parquet") }
        }
    }

    /// The img2dataset layout `--output-format` names, or nil for the named files or no output.
    private func datasetLayout() throws -> DatasetWriter.Layout? {
        switch outputFormat {
        case nil, "named": return nil
        case "files": return .files
        case "webdataset", "tar": return .webdataset
        case "parquet": return .parquet
        case "tfrecord":
            throw ValidationError(
                "--output-format tfrecord is not written here (img2dataset's needs TensorFlow): parquet or webdataset hold the same samples"
            )
        case let other?: throw ValidationError("--output-format takes named, files, webdataset, tar or parquet, not \(other)")
        }
    }

    /// Which slice of the list this run takes, or nil for all of it. Read as
    /// text and checked here, as ``ImageShapingOptions`` reads its options. Without `--shard`, a
    /// Kubernetes Indexed Job's pod index (`JOB_COMPLETION_INDEX`, which the Job controller sets)
    /// of `JOB_COMPLETIONS` (which the manifest sets to its `completions`), when both are set.
    private func shard() throws -> ListSlice? {
        let environment = ProcessInfo.processInfo.environment
        let (text, source): (String, String)
        if let shardText {
            (text, source) = (shardText, "--shard")
        } else if let index = environment["JOB_COMPLETION_INDEX"], !index.isEmpty, let count = environment["JOB_COMPLETIONS"],
            !count.isEmpty
        {
            (text, source) = ("\(index)/\(count)", "JOB_COMPLETION_INDEX/JOB_COMPLETIONS")
        } else {
            return nil
        }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1, (0..<count).contains(index) else {
            throw ValidationError("\(source) takes I/N with 0 ≤ I < N, not \"\(text)\"")
        }
        return ListSlice(index: index, count: count)
    }

    /// The schemes and buckets rows may use.
    private func rowSchemes() throws(DatasetError) -> RowSchemes {
        try RowSchemes(schemes: allowedURLSchemes, buckets: allowedBuckets)
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
        let schemes: RowSchemes
        /// The `X-Robots-Tag` rule, made once: every load judges it.
        let robotsTag: RobotsTag
        let robots: RobotsPolicy?
        let context: LoadContext
        let writer: ImageOutput
        let counts: PrefetchCounts
        let reporter: ProgressReporter
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let tracingSwitch = try TraceExport.tracingSwitch(environment)
        outputOptions.bootstrapLogging(traced: TracingRequest.isRequested(switch: tracingSwitch, environment: environment))
        try await TraceExport.running(try TraceExport.bootstrap(switch: tracingSwitch, environment: environment)) {
            guard lists.contains(where: Self.isBucket) else { return try await prefetchAll() }
            // A list in a bucket is copied to a local file first (the lists under a prefix to a
            // local folder): the list is read twice (the count, then the run) and streamed, as a
            // local one is.
            var copies: [URL] = []
            defer { for copy in copies { try? FileManager.default.removeItem(at: copy) } }
            var local = self
            local.input = []
            for list in lists {
                guard Self.isBucket(list) else {
                    local.input.append(list)
                    continue
                }
                let copy = try await Self.copyList(list, format: dataset.listFormat, environment: environment)
                copies.append(copy.folder)
                local.input.append(copy.path)
            }
            try await local.prefetchAll()
        }
    }

    /// `-i s3://BUCKET/KEY` or `-i gs://BUCKET/OBJECT` (a trailing `/` for a prefix's lists)
    /// copied to a local file or folder (``BucketListCopy``), with a client made from the
    /// environment's settings.
    private static func copyList(_ text: String, format: ListFormat, environment: [String: String]) async throws -> BucketListCopy.Copy {
        let what = "cannot read the list \(text)"
        if let url = URL(string: text), let location = S3Location(url: url) {
            return try await withS3Client(what, environment: environment) { client in
                try await BucketListCopy.download(
                    location.key, from: S3ShardStore(client: client, bucket: location.bucket), format: format, name: text)
            }
        }
        if let url = URL(string: text), let location = GCSLocation(url: url) {
            return try await withGCSClient(what, environment: environment) { client in
                try await BucketListCopy.download(
                    location.object, from: GCSShardStore(client: client, bucket: location.bucket), format: format, name: text)
            }
        }
        throw CommandFailure("-i \(text) is not s3://BUCKET/KEY or gs://BUCKET/OBJECT")
    }

    private func prefetchAll() async throws {
        if countRows { return try printRowCount() }
        HeapTuning.keepImageBuffers()
        Self.raiseOpenFileLimit()
        // One resolver for the images and robots.txt: each host looked up once for both.
        let resolver = CachingHostResolver()
        let adjustText: ((inout ImageDownloaderConfiguration) -> Void)? =
            dataset.respectRobotsTxt
            ? {
                adjustUserAgent(&$0)
                Self.resolveNames(&$0, with: resolver)
            } : nil
        let schemes = try rowSchemes()
        let session = try LoadSession(
            cache: cache, memoryOnly: false, network: network, concurrency: jobs, politeness: politeness, schemes: schemes.schemes,
            adjust: {
                adjustDownloader(&$0)
                Self.resolveNames(&$0, with: resolver)
            }, adjustText: adjustText)
        let counts = PrefetchCounts()
        let reporter = ProgressReporter(
            total: try countSelected(), counts: counts, isTerminal: ProgressReporter.stderrIsTerminal,
            interval: .milliseconds(Int64(progressInterval * 1000)))
        let run = Run(
            session: session, schemes: schemes, robotsTag: robotsTag,
            robots: session.textLoader.map { RobotsPolicy(loader: $0, agent: dataset.robotsAgent) },
            context: try loadContext(readOnlyCache: session.cache.disk?.isReadOnly == true),
            writer: ImageOutput(format: try ImageOutput.parseFormat(format), options: encoding.options()),
            counts: counts, reporter: reporter)
        let display = Task { await reporter.run() }
        let start = ContinuousClock.now
        let total: Int
        do {
            if let layout = try datasetLayout() {
                total = try await saveDataset(layout: layout, run: run)
            } else if let output {
                total = try await saveFiles(into: output, run: run)
            } else {
                total = try await streamList(run: run) { row in { await prefetch(row, stem: "", into: nil, run: run) } }
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
        try judgeExit(succeeded: final.succeeded, failed: final.failed, dataset: try datasetLayout() != nil)
    }

    /// The exit of a run whose work ended. A dataset run exits 0 once every shard is whole, as
    /// img2dataset does: its failed rows are data (records and stats), and a script, a Spark task
    /// or a Kubernetes Job that took a non-zero exit for a failure would redo a finished run. With
    /// `--min-success-rate` it exits 1 when too few rows succeeded. Without a dataset layout a
    /// failed URL is a failure of the run unless `--allow-failures`.
    private func judgeExit(succeeded: Int, failed: Int, dataset: Bool) throws {
        guard dataset else {
            if failed > 0 && !allowFailures { throw ExitCode.failure }
            return
        }
        guard let minSuccessRate, succeeded + failed > 0 else { return }
        let rate = Double(succeeded) / Double(succeeded + failed)
        if rate < minSuccessRate {
            printError("webimage: \(String(format: "%.3f", rate)) of the rows succeeded, under --min-success-rate \(minSuccessRate)")
            throw ExitCode.failure
        }
    }

    /// `-o DIR` with `--output-format files`: the list streamed into the cache and a file per
    /// image. Names are chosen over every line, this run's slice or not, so that the directories
    /// of N shards merge into one; returns how many URLs this run took.
    private func saveFiles(into path: String, run: Run) async throws -> Int {
        let output = try NamedOutput(directory: URL(fileURLWithPath: path, isDirectory: true))
        var namer = FileNamer()
        var stem = ""
        return try await streamList(
            run: run,
            everyLine: { row, index in stem = namer.stem(for: row.url, index: index) },
            { row in
                let name = stem
                return { await prefetch(row, stem: name, into: output, run: run) }
            })
    }

    /// Loads one URL, and with `-o` writes it as `stem.EXT`, EXT from the format written. What
    /// is skipped: with `-o`, a URL whose file is there (the output is what a rerun resumes
    /// from, whatever the cache kept); without, a URL in the disk cache, unless
    /// `--respect-cache-control`, where the manager decides (a fresh entry is read from the disk
    /// and counted as skipped, a stale one revalidated).
    private func prefetch(_ row: ListRow, stem: String, into output: NamedOutput?, run: Run) async {
        let text = row.url
        func fail(_ reason: String) {
            run.counts.update { $0.failed += 1 }
            run.reporter.message("webimage: \(DatasetJob.bounded(text)): \(DatasetJob.bounded(reason))")
        }
        if let malformed = row.malformed { return fail(malformed) }
        guard let url = URL(string: text), url.scheme != nil else { return fail("not a URL") }
        if let refusal = run.schemes.refusal(for: url) { return fail(refusal) }
        let skips =
            if let output { output.has(stem) } else {
                !network.respectCacheControl
                    && run.session.cache.diskImageExists(for: run.session.manager.variantKey(for: url, context: run.context))
            }
        if skips {
            run.counts.update { $0.skipped += 1 }
            return
        }
        if let robots = run.robots, let refusal = await robots.refusal(for: url) { return fail(refusal) }
        do {
            let result = try await load(url, run: run)
            if let output {
                let written = try encoded(result, run: run)
                try await Self.write(
                    written.bytes, to: output.directory.appendingPathComponent(stem + "." + written.format.preferredFileExtension))
            }
            if output == nil, network.respectCacheControl, result.cacheType == .disk {
                run.counts.update { $0.skipped += 1 }
                return
            }
            run.counts.update {
                $0.succeeded += 1
                $0.bytes += Int64(result.data?.count ?? 0)
            }
        } catch {
            fail("\(error)")
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
                    returning: Result { () throws(WebImageError) in try FileSystem.writeWhole(bytes, to: target.path) })
            }
        }
        try result.get()
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

    /// `--output-format files|webdataset|parquet`: the list streamed row by row into img2dataset's
    /// shards; returns how many rows this run took (its slice of the list).
    private func saveDataset(layout: DatasetWriter.Layout, run: Run) async throws -> Int {
        let target = output ?? "."
        guard Self.isBucket(target) else {
            let folder = try FolderDestination(directory: URL(fileURLWithPath: target, isDirectory: true))
            return try await saveDataset(into: folder, layout: layout, run: run)
        }
        let url = URL(string: target) ?? URL(fileURLWithPath: target)
        let environment = ProcessInfo.processInfo.environment
        if target.lowercased().hasPrefix("gs://") {
            return try await withGCSClient("cannot write to \(target)", environment: environment) { client in
                try await saveDataset(into: try BucketDestination(url: url, client: client), layout: layout, run: run)
            }
        }
        return try await withS3Client("cannot write to \(target)", environment: environment) { client in
            try await saveDataset(into: try BucketDestination(url: url, client: client), layout: layout, run: run)
        }
    }

    /// Whether `-i` or `-o` names a bucket's object or prefix (`s3://`, `gs://`) rather than a file or folder.
    static func isBucket(_ path: String) -> Bool {
        ["s3://", "gs://"].contains { path.lowercased().hasPrefix($0) }
    }

    private func saveDataset(into destination: any DatasetDestination, layout: DatasetWriter.Layout, run: Run) async throws -> Int {
        let resizer = try dataset.resizer()
        let writer = try await DatasetWriter.open(
            destination, layout: layout, imageColumn: resizer.encodeFormat.preferredFileExtension, shardSize: shardSize,
            slice: try shard() ?? ListSlice(index: 0, count: 1))
        let hashes = try dataset.hashes()
        let job = DatasetJob(
            manager: run.session.manager, context: run.context, resizer: resizer, limits: DecodeLimits(),
            columns: try dataset.columns(), computeHash: hashes.compute, verifyHash: hashes.verify?.kind,
            digests: dataset.dedup ? DownloadDigests() : nil, schemes: run.schemes, robots: run.robots, robotsTag: run.robotsTag,
            extractsExif: dataset.extractExif, boxesColumn: dataset.bboxCol)
        let finished: @Sendable (ListRow, DatasetWriter.Sample?) -> Void = { row, sample in
            guard let sample else { return run.counts.update { $0.skipped += 1 } }
            run.counts.update {
                if sample.status == .success { $0.succeeded += 1 } else { $0.failed += 1 }
                $0.bytes += Int64(sample.image?.count ?? 0)
            }
            if let error = sample.error { run.reporter.message("webimage: \(row.url): \(error)") }
        }
        return try await job.write(
            ListEntries(try listReader(), slice: try shard()), into: writer, concurrency: jobs,
            wrap: { row, work in TraceExport.traced("prefetch", url: row.url, work) }, finished: finished)
    }

    /// The downloader as the dataset options ask: the timeout, the retries, the user agent
    /// token, and `X-Robots-Tag` kept with every download (and its cache entry) to be judged.
    private func adjustDownloader(_ configuration: inout ImageDownloaderConfiguration) {
        if let timeout = dataset.timeout { configuration.timeout = .milliseconds(Int64(timeout * 1000)) }
        if let retries = dataset.retries { configuration.retryPolicy.maximumRetries = retries }
        adjustUserAgent(&configuration)
        // Kept whatever this run refuses: a later run on the same cache may refuse more.
        configuration.retainedResponseHeaders = [RobotsTag.headerName]
    }

    /// Raises the soft limit of open files to the hard one (at most 65,536), as Go's runtime and
    /// nginx's `worker_rlimit_nofile` do: a crawl of `-j 256` holds three descriptors per
    /// download (the client's socket and the two of the resolving relay) and its idle
    /// connections, past the 1,024 a Debian login starts with.
    private static func raiseOpenFileLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let wanted = min(limit.rlim_max, 65_536)
        guard limit.rlim_cur < wanted else { return }
        limit.rlim_cur = wanted
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// A crawl looks its host names up itself, many at once and each once
    /// (``ImageDownloaderConfiguration/resolvesHostNames``): NIO's resolver, one lookup at a time
    /// per event loop, left a crawl of thousands of hosts behind a slow DNS server waiting until
    /// its connections timed out (the `crawl` comparison in scripts/compare).
    ///
    /// An idle connection is kept ``idleConnectionTimeout``: a crawl's next row is rarely on the
    /// same host, and each idle connection holds its buffers (the client's last read, up to
    /// 64 KiB, and the relay's two channels).
    private static func resolveNames(_ configuration: inout ImageDownloaderConfiguration, with resolver: CachingHostResolver) {
        configuration.resolvesHostNames = true
        configuration.hostResolver = resolver
        configuration.connectionIdleTimeout = configuration.connectionIdleTimeout ?? idleConnectionTimeout
    }

    /// How long a run keeps an idle connection. On the `crawl` comparison's 1,500 hosts, kept 2 s
    /// they held 168 MB of peak RSS, 250 ms 129 MB, none (a connection per request) 113 MB, with
    /// the same successes a second; a list on one host (the `dataset` comparison) asks again well
    /// within 250 ms and keeps its connections, where none would connect for every image.
    static let idleConnectionTimeout = Duration.milliseconds(250)

    /// The `X-Robots-Tag` rule of the run.
    private var robotsTag: RobotsTag {
        RobotsTag(disallowed: dataset.disallowedDirectives, token: dataset.normalizedToken)
    }

    /// Runs this run's slice of the list, `jobs` at a time, never holding the list
    /// (``ListEntries/run(on:concurrency:everyRow:_:)``): `job` gets each row the run takes and
    /// returns the work to do, or nil to skip it; `everyLine` sees every row of the list, in this
    /// run's slice or not, with its index. Returns how many rows the run took.
    private func streamList(
        run: Run, everyLine: (ListRow, Int) -> Void = { _, _ in }, _ job: (ListRow) -> (@Sendable () async throws -> Void)?
    ) async throws -> Int {
        let entries = ListEntries(try listReader(), slice: try shard())
        return try await entries.run(
            on: run.session.manager, concurrency: jobs, everyRow: { everyLine($0.row, $0.index) },
            { row, _ in job(row).map { TraceExport.traced("prefetch", url: row.url, $0) } })
    }

    /// Loads one URL into the cache (unless `--no-cache`). Images kept as they came are checked by
    /// their header alone, as img2dataset does without re-encoding: decoding 10,000 50 KB JPEGs
    /// took a fifth of a run. Bytes whose header is not an image's are a failure and leave the
    /// cache again.
    private func load(_ url: URL, run: Run) async throws -> ImageResult {
        guard writesOriginals(run) else {
            // An animated source is transformed frame by frame too: the manager would otherwise
            // keep it as it is, and --transform would be skipped without a word.
            let result = try await run.session.manager.image(
                for: url, options: [.waitStoreCache, .transformAnimatedImage], context: run.context)
            if run.robotsTag.refuses(result.metadata) { throw CommandFailure(RobotsTag.refusal) }
            return result
        }
        let result = try await run.session.manager.image(for: url, options: [.waitStoreCache, .avoidDecodeImage], context: run.context)
        if run.robotsTag.refuses(result.metadata) { throw CommandFailure(RobotsTag.refusal) }
        do throws(WebImageError) {
            _ = try ImageHeader(data: [UInt8](result.data ?? Data()))
        } catch {
            await run.session.cache.remove(run.session.manager.variantKey(for: url, context: run.context))
            throw error
        }
        return result
    }

    /// `--user-agent-token`: `(compatible; TOKEN)` after the User-Agent.
    private func adjustUserAgent(_ configuration: inout ImageDownloaderConfiguration) {
        guard let token = dataset.userAgentToken?.trimmingCharacters(in: .whitespaces), !token.isEmpty else { return }
        configuration.headers = configuration.headers.map { header in
            header.name.lowercased() == "user-agent" ? (header.name, "\(header.value) (compatible; \(token))") : header
        }
    }

    /// The list, in its format, with the columns the run reads.
    private func listReader() throws -> SampleLists {
        try SampleLists(paths: lists, format: dataset.listFormat, columns: try dataset.columns())
    }

    /// `--count-rows`: the rows of this run's slice, on stdout.
    private func printRowCount() throws {
        let rows = try countSelected()
        print(outputOptions.json ? jsonLine(["rows": rows]) : "\(rows) rows")
    }

    /// How many URLs this run will take, counted without keeping the list (0 for stdin).
    private func countSelected() throws -> Int {
        guard lists != ["-"] else { return 0 }
        return try ListEntries(try listReader(), slice: try shard()).countTaken()
    }

    /// The shaping options' context, storing on disk only: the process exits when the list is
    /// done, so a decoded image is checked and dropped, never kept in the memory cache (2,000
    /// 50 KB JPEGs held 633 MB of them at the end of a run).
    ///
    /// A cache another process holds (two runs on one cache directory, as the GNU parallel
    /// recipe starts them) opens read-only: this run then reads from it but stores nothing, with
    /// a warning, instead of failing every store.
    private func loadContext(readOnlyCache: Bool) throws -> LoadContext {
        var context = try shaping.context()
        let storesNothing = noCache || readOnlyCache
        if readOnlyCache, !noCache {
            printError(
                "webimage: the cache in \(cache.directory.path) is in use by another process: this run reads it but stores nothing in it")
        }
        // `ImageCacheType.none`, spelled out: `.none` would be the optional's nil, which means "all".
        context.storeCacheType = storesNothing ? ImageCacheType.none : .disk
        if storesNothing { context.originalStoreCacheType = ImageCacheType.none }
        return context
    }
}

/// The directory of `-o` in named mode, and the stems of the files a run before this one left
/// there (each file's name without its extension, as a 64-bit hash), read once at the start: a
/// rerun skips a URL whose file is there, whatever the cache holds.
struct NamedOutput: Sendable {
    let directory: URL
    private let existing: Set<UInt64>

    init(directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.directory = directory
        existing = Set(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasSuffix(".partial") }.map {
                FileNamer.hash(URL(fileURLWithPath: $0).deletingPathExtension().lastPathComponent)
            })
    }

    func has(_ stem: String) -> Bool { existing.contains(FileNamer.hash(stem)) }
}

/// File names for `-o` in named mode, one URL at a time: the stem of the URL's last path
/// component (its extension comes from the format written, not the URL), made safe for a file
/// name, with the URL's place in the list added when an earlier URL took the stem, and a
/// counter after that while the name is still taken. So `a.png` and `a.jpg` written as WebP
/// become `a.webp` and `a-2.webp`, and `%2F` in a URL never makes a folder. What it keeps is a
/// 64-bit hash of each stem given (about 11 bytes a URL, 110 MB for ten million), not the list;
/// the hash is fixed (FNV-1a), so every shard of a list names every URL alike.
struct FileNamer {
    private var used: Set<UInt64> = []

    /// The longest stem kept, in bytes: room for a suffix and an extension under NAME_MAX (255).
    static let maximumStemBytes = 200

    mutating func stem(for text: String, index: Int) -> String {
        let base = Self.safeStem(of: text)
        var stem = base
        var attempt = 0
        while !used.insert(Self.hash(stem)).inserted {
            attempt += 1
            stem = attempt == 1 ? "\(base)-\(index + 1)" : "\(base)-\(index + 1)-\(attempt)"
        }
        return stem
    }

    /// The URL's last path component, decoded, without its extension; `/`, NUL and control
    /// characters replaced, `.` and `..` and empty names replaced by `image`, cut to
    /// ``maximumStemBytes``.
    static func safeStem(of text: String) -> String {
        let component = URL(string: text).map { $0.deletingPathExtension().lastPathComponent } ?? ""
        var stem = String(component.unicodeScalars.map { $0 == "/" || $0.value < 0x20 || $0 == "\u{7F}" ? "_" : Character($0) })
        while stem.utf8.count > maximumStemBytes { stem.removeLast() }
        if stem.isEmpty || stem == "." || stem == ".." { return "image" }
        return stem.hasPrefix(".") ? "image" + stem : stem
    }

    static func hash(_ name: String) -> UInt64 {
        name.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01B3 }
    }
}
