import ArgumentParser
import Foundation
import WebImage
import WebImageDataset

/// `webimage fetch`: loads URLs through the manager, in order, and writes or reports each.
struct FetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Load images through the memory and disk caches, and write them to files.",
        discussion: """
            URLs load one after another, in the order given. With -o, one URL is written to PATH \
            (a file, or into it if it is a directory) and several URLs into the directory PATH. \
            The format comes from --format, else PATH's extension, else the source format, in \
            which case the original bytes are written exactly as they came. Without -o nothing \
            is written: the images are loaded into the cache and reported.

            Each image gets one line: where it came from (memory, disk or network), format, size, \
            frames, bytes and time. With --json, one JSON object per image instead (fields: url, \
            finalURL, source, format, width, height, frames, bytes, milliseconds, output, warnings, \
            partial, error; warnings when the decoder worked around damage, partial with \
            --accept-truncated when the data ended before the image).

            Examples:
              webimage fetch https://example.com/a.jpg -o a.jpg
              webimage fetch https://example.com/a.jpg https://example.com/b.png -o images/ --format webp
              webimage fetch https://example.com/a.jpg --thumbnail 300x300 --transform round:16 -o thumb.png
              webimage fetch https://example.com/a.jpg --options refresh-cached,retry-failed --json
              webimage fetch https://example.com/a.jpg --block-private-addresses --proxy http://proxy:3128 --cacert ca.pem

            Proxies come from $https_proxy, $http_proxy, $all_proxy and $no_proxy (or their \
            upper-case forms) as curl reads them, unless --proxy or --noproxy is given.
            """
    )

    @Argument(help: "The image URLs (http, https, file, data, s3://BUCKET/KEY with the AWS settings, gs://BUCKET/OBJECT with Google's).")
    var urls: [String]

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write: a file for one URL, a directory for several.", valueName: "PATH"))
    var output: String?

    @Option(help: ArgumentHelp("Output format: \(ImageOutput.formatNames).", valueName: "FORMAT"))
    var format: String?

    @OptionGroup var shaping: ImageShapingOptions

    @OptionGroup(title: "Encoding") var encoding: EncodingOptions

    @Option(
        help: ArgumentHelp(
            "SDWebImage options in kebab case, comma-separated (retry-failed,refresh-cached,from-cache-only,...).", valueName: "LIST"))
    var options: String?

    @OptionGroup var cache: CacheOptions

    @OptionGroup(title: "Network") var network: NetworkOptions

    @Flag(help: "Use no disk cache (memory only, for this run).")
    var noCache = false

    @Flag(
        help: ArgumentHelp(
            "Keep what arrived of an image whose data ends early (never cached) instead of failing; the same as --options accept-truncated-images."
        ))
    var acceptTruncated = false

    @OptionGroup var outputOptions: OutputOptions

    func validate() throws {
        try cache.check()
        _ = try ImageOutput.parseFormat(format)
        try shaping.check()
        try encoding.check()
        do { _ = try LoadOptions(parsing: options ?? "") } catch { throw ValidationError("--options: \(error.message ?? "\(error)")") }
    }

    struct Report: Encodable {
        var url: String
        /// Where the bytes came from after redirects, when they came from the network.
        var finalURL: String?
        var source: String?
        var format: String?
        var width: Int?
        var height: Int?
        var frames: Int?
        var bytes: Int?
        var milliseconds: Double
        var output: String?
        /// What the decoder worked around (as browsers do), when anything.
        var warnings: [String]?
        /// Whether the data ended before the image (with --accept-truncated).
        var partial: Bool?
        var error: String?
    }

    func run() async throws {
        outputOptions.bootstrapLogging()
        let session = try LoadSession(cache: cache, memoryOnly: noCache, network: network, schemes: RowSchemes.known.union(["gs"]))
        var loadOptions = try LoadOptions(parsing: options ?? "").union([.queryMemoryData, .queryMemoryDataSync, .waitStoreCache])
        if acceptTruncated { loadOptions.insert(.acceptTruncatedImages) }
        let context = try shaping.context()
        let writer = ImageOutput(format: try ImageOutput.parseFormat(format), options: encoding.options())
        let directory = try outputDirectory()
        var failures = 0
        for (index, text) in urls.enumerated() {
            let report = await fetch(
                text, index: index, session: session, options: loadOptions, context: context, writer: writer, directory: directory)
            if report.error != nil { failures += 1 }
            print(outputOptions.json ? jsonLine(report) : line(report))
        }
        try await session.shutdown()
        if failures > 0 { throw ExitCode.failure }
    }

    /// The directory images go into, or nil when -o names one file (or is absent).
    private func outputDirectory() throws -> URL? {
        guard let output else { return nil }
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: output, isDirectory: &isDirectory)
        guard urls.count > 1 || (exists && isDirectory.boolValue) || output.hasSuffix("/") else { return nil }
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        return URL(fileURLWithPath: output, isDirectory: true)
    }

    private func fetch(
        _ text: String, index: Int, session: LoadSession, options: LoadOptions, context: LoadContext, writer: ImageOutput, directory: URL?
    ) async -> Report {
        let start = ContinuousClock.now
        var report = Report(url: text, milliseconds: 0)
        do {
            guard let url = URL(string: text), url.scheme != nil else { throw CommandFailure("not a URL: \(text)") }
            let result = try await session.manager.image(for: url, options: options, context: context)
            // A partial image is written as decoded, not as the bytes that stop short.
            let isPartial = result.image?.isPartial == true
            let original = context.imageTransformer == nil && context.imageThumbnailPixelSize == nil && !isPartial ? result.data : nil
            let sourceFormat = result.image?.sourceFormat ?? result.data.flatMap { ImageFormat(sniffing: $0) }
            report.finalURL = result.finalURL?.absoluteString
            report.source = ["memory", "disk", "network"][result.cacheType == .memory ? 0 : result.cacheType == .disk ? 1 : 2]
            report.format = sourceFormat?.rawValue
            report.width = result.image?.pixelWidth
            report.height = result.image?.pixelHeight
            report.frames = result.image?.frames.count
            report.bytes = result.data?.count
            if let warnings = result.image?.warnings, !warnings.isEmpty { report.warnings = warnings }
            if isPartial { report.partial = true }
            if let path = outputPath(for: url, index: index, directory: directory, writer: writer, sourceFormat: sourceFormat) {
                let (bytes, _) = try writer.bytes(for: result.image, original: original, sourceFormat: sourceFormat, path: path)
                try bytes.write(to: URL(fileURLWithPath: path))
                report.output = path
            }
        } catch {
            report.error = "\(error)"
            printError("webimage: \(text): \(error)")
        }
        report.milliseconds = (ContinuousClock.now - start).milliseconds
        return report
    }

    private func outputPath(for url: URL, index: Int, directory: URL?, writer: ImageOutput, sourceFormat: ImageFormat?) -> String? {
        guard let output else { return nil }
        guard let directory else { return output }
        let format = writer.format ?? ImageOutput.encodable(sourceFormat)
        return directory.appendingPathComponent(ImageOutput.fileName(for: url, index: index, format: format)).path
    }

    private func line(_ report: Report) -> String {
        guard report.error == nil else { return "\(report.url)  failed" }
        var text = report.url.padded(40) + (report.source ?? "?").padded(8) + (report.format ?? "?").padded(5)
        text += report.width.map { "\($0)x\(report.height ?? 0)" }?.padded(11) ?? "-".padded(11)
        text += "\(report.frames ?? 0) frame\(report.frames == 1 ? "" : "s")".padded(10)
        text += "\(report.bytes ?? 0) bytes".padded(14) + String(format: "%.1f ms", report.milliseconds)
        if let output = report.output { text += "  -> \(output)" }
        return text
    }
}
