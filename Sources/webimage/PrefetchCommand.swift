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
            See docs/crawling.md.
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

    @Option(name: .shortAndLong, help: ArgumentHelp("Also save each image into this directory, in its source format.", valueName: "DIR"))
    var output: String?

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
        _ = try shard()
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

    func run() async throws {
        outputOptions.bootstrapLogging()
        let (urls, names) = try selectedList()
        let session = try LoadSession(cache: cache, memoryOnly: false, network: network, concurrency: jobs, politeness: politeness)
        let context = try loadContext()
        let directory = try output.map { path -> URL in
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            return URL(fileURLWithPath: path, isDirectory: true)
        }
        let counts = PrefetchCounts()
        let reporter = ProgressReporter(
            total: urls.count, counts: counts, isTerminal: ProgressReporter.stderrIsTerminal,
            interval: .milliseconds(Int64(progressInterval * 1000)))
        let display = Task { await reporter.run() }
        let start = ContinuousClock.now
        await withTaskGroup(of: Void.self) { group in
            var next = 0
            func startNext() {
                guard next < urls.count else { return }
                let index = next
                next += 1
                group.addTask {
                    await prefetch(
                        urls[index], name: names[index], session: session, context: context, directory: directory, counts: counts,
                        reporter: reporter)
                }
            }
            for _ in 0..<jobs { startNext() }
            while await group.next() != nil { startNext() }
        }
        display.cancel()
        _ = await display.value
        reporter.clear()
        try await session.shutdown()
        let seconds = (ContinuousClock.now - start).milliseconds / 1000
        let final = counts.snapshot
        let summary = Summary(
            total: urls.count, succeeded: final.succeeded, failed: final.failed, skipped: final.skipped,
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

    private func prefetch(
        _ text: String, name: String, session: LoadSession, context: LoadContext, directory: URL?,
        counts: PrefetchCounts, reporter: ProgressReporter
    ) async {
        guard let url = URL(string: text), url.scheme != nil else {
            counts.update { $0.failed += 1 }
            reporter.message("webimage: \(text): not a URL")
            return
        }
        let target = directory?.appendingPathComponent(name)
        let cached = session.cache.diskImageExists(for: session.manager.variantKey(for: url, context: context))
        if cached, target.map({ FileManager.default.fileExists(atPath: $0.path) }) ?? true {
            counts.update { $0.skipped += 1 }
            return
        }
        do {
            let result = try await session.manager.image(
                for: url, options: [.waitStoreCache], context: context)
            if let target {
                let (bytes, _) = try ImageOutput(format: nil, options: nil).bytes(
                    for: result.image,
                    original: context.imageTransformer == nil && context.imageThumbnailPixelSize == nil ? result.data : nil,
                    sourceFormat: result.image?.sourceFormat, path: nil)
                try bytes.write(to: target)
            }
            counts.update {
                $0.succeeded += 1
                $0.bytes += Int64(result.data?.count ?? 0)
            }
        } catch {
            counts.update { $0.failed += 1 }
            reporter.message("webimage: \(text): \(error)")
        }
    }

    /// The shaping options' context, storing on disk only: the process exits when the list is
    /// done, so a decoded image is checked and dropped, never kept in the memory cache (2,000
    /// 50 KB JPEGs held 633 MB of them at the end of a run).
    private func loadContext() throws -> LoadContext {
        var context = try shaping.context()
        context.storeCacheType = .disk
        return context
    }

    /// The URLs this run takes (all, or its shard's) and the file name of each. Names come from
    /// the whole list, so that the directories of N shards merge into one.
    private func selectedList() throws -> (urls: [String], names: [String]) {
        let urls = try readList()
        let names = Self.uniqueNames(urls)
        guard let (index, count) = try shard() else { return (urls, names) }
        let kept = urls.indices.filter { Self.slice(of: urls[$0], count: count) == index }
        return (kept.map { urls[$0] }, kept.map { names[$0] })
    }

    private func readList() throws -> [String] {
        let data: Data
        if input == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let contents = FileManager.default.contents(atPath: input) else { throw CommandFailure("cannot read \(input)") }
            data = contents
        }
        return String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    /// A file name per URL from its last path component; repeats get the URL's position added.
    static func uniqueNames(_ urls: [String]) -> [String] {
        var used: Set<String> = []
        return urls.enumerated().map { index, text in
            let url = URL(string: text) ?? URL(fileURLWithPath: "image")
            let stem = url.deletingPathExtension().lastPathComponent
            let base = stem.isEmpty || stem == "/" ? "image" : stem
            let ext = url.pathExtension.isEmpty ? "img" : url.pathExtension
            var name = "\(base).\(ext)"
            if used.contains(name) { name = "\(base)-\(index + 1).\(ext)" }
            used.insert(name)
            return name
        }
    }
}
