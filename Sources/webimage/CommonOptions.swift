import ArgumentParser
import Foundation
import Logging
import WebImage

/// Options every subcommand that touches the cache shares.
struct CacheOptions: ParsableArguments {
    @Option(
        name: .customLong("cache-dir"),
        help: ArgumentHelp("The cache directory (default: $WEBIMAGE_CACHE_DIR, else ~/.cache/webimage/default).", valueName: "DIR"))
    var cacheDirectory: String?

    /// The directory to use: the option, the environment, or the library's default.
    var directory: URL {
        if let cacheDirectory { return URL(fileURLWithPath: cacheDirectory) }
        if let fromEnvironment = ProcessInfo.processInfo.environment["WEBIMAGE_CACHE_DIR"], !fromEnvironment.isEmpty {
            return URL(fileURLWithPath: fromEnvironment)
        }
        return DiskCache.defaultDirectory()
    }

    @Option(
        help: ArgumentHelp(
            "The disk cache's size limit in MiB; 0 for none (default 512). A long crawl raises it, or its early entries are evicted.",
            valueName: "MIB"))
    var cacheSizeLimit: Int?

    @Option(help: ArgumentHelp("How many days an unused cache entry is kept; 0 for no limit (default 7).", valueName: "DAYS"))
    var cacheMaxAge: Double?

    /// Checks the limits, for a command's `validate()`.
    func check() throws {
        if let cacheSizeLimit, cacheSizeLimit < 0 { throw ValidationError("--cache-size-limit takes 0 or more MiB, not \(cacheSizeLimit)") }
        if let cacheMaxAge, !(cacheMaxAge >= 0) { throw ValidationError("--cache-max-age takes 0 or more days, not \(cacheMaxAge)") }
    }

    /// The disk cache's configuration: the library's defaults, with the limits given.
    var configuration: DiskCacheConfiguration {
        var configuration = DiskCacheConfiguration()
        if let cacheSizeLimit { configuration.sizeLimit = cacheSizeLimit * 1024 * 1024 }
        if let cacheMaxAge { configuration.maximumAge = cacheMaxAge == 0 ? nil : .seconds(cacheMaxAge * 86_400) }
        return configuration
    }

    func openDiskCache() throws -> DiskCache {
        do {
            return try DiskCache(directory: directory, configuration: configuration)
        } catch {
            throw CommandFailure("cannot open the cache in \(directory.path): \(error)")
        }
    }
}

/// `--json` and `--verbose`.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print machine-readable JSON on stdout.")
    var json = false

    @Flag(help: "Log debug messages on stderr.")
    var verbose = false

    /// Sends library logs to stderr: debug with --verbose, else warnings and worse; a traced
    /// run's lines carry their trace id.
    func bootstrapLogging(traced: Bool = false) {
        LogOutput(level: verbose ? .debug : .warning, traced: traced).bootstrap()
    }
}

/// What `--thumbnail` and `--transform` ask of a load or a conversion.
struct ImageShapingOptions: ParsableArguments {
    // Read as text and checked by check(), like --transform: when an option's transform closure
    // throws, swift-argument-parser 1.8.2 leaks an array on its way to the usage error
    // (LeakSanitizer, issue 23), which would make every such usage error a leak report.
    @Option(
        name: .customLong("thumbnail"),
        help: ArgumentHelp("Decode at most this size, keeping the aspect ratio (e.g. 300x200).", valueName: "WxH"))
    var thumbnailText: String?

    @Option(help: ArgumentHelp("Transformers to apply, e.g. resize:300x200:aspectfill,round:16,blur:4.", valueName: "SPEC"))
    var transform: String?

    struct ThumbnailSize {
        let width: Int
        let height: Int
    }

    static func size(_ text: String) throws -> ThumbnailSize {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]), width > 0, height > 0, width <= 20_000,
            height <= 20_000
        else {
            throw ValidationError("--thumbnail: a size is WxH with whole numbers from 1 to 20000, not \"\(text)\"")
        }
        return ThumbnailSize(width: width, height: height)
    }

    /// The thumbnail size asked for; a malformed one is a usage error.
    func thumbnail() throws -> ThumbnailSize? {
        try thumbnailText.map(Self.size)
    }

    /// Checks both options, for a command's `validate()`.
    func check() throws {
        _ = try thumbnail()
        _ = try transformer()
    }

    /// The parsed transformer; a bad spec is a usage error.
    func transformer() throws -> (any ImageTransformer)? {
        guard let transform else { return nil }
        do {
            return try TransformSpec.parse(transform)
        } catch {
            throw ValidationError("--transform: \(error.message ?? "\(error)")")
        }
    }

    /// A load context with the thumbnail and transformer set.
    func context() throws -> LoadContext {
        var context = LoadContext()
        if let thumbnail = try thumbnail() { context.imageThumbnailPixelSize = (thumbnail.width, thumbnail.height) }
        context.imageTransformer = try transformer()
        return context
    }
}

/// How `convert` and `fetch` encode what they re-encode (``EncodeOptions``). Read as text or
/// numbers and checked by check(), as ``ImageShapingOptions`` is.
struct EncodingOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Lossy quality, 1 to 100.", valueName: "N"))
    var quality: Int?

    @Flag(help: "JPEG: write a progressive file instead of a baseline one.")
    var progressive = false

    @Flag(help: "WebP: lossless, every value kept (transparent pixels' colour too).")
    var lossless = false

    @Option(
        name: .customLong("subsampling"),
        help: ArgumentHelp("JPEG chroma subsampling: 444, 422 or 420 (the default).", valueName: "MODE"))
    var subsamplingText: String?

    @Option(help: ArgumentHelp("JPEG and lossy WebP: the highest quality whose file fits in BYTES.", valueName: "BYTES"))
    var maxFileSize: Int?

    @Option(name: .customLong("webp-method"), help: ArgumentHelp("WebP effort, 0 (fastest) to 6 (smallest; default 4).", valueName: "N"))
    var webPMethod: Int?

    @Option(
        help: ArgumentHelp(
            "PNG's deflate level, 0 (fastest) to 9 (smallest; default \(EncodeOptions().pngCompressionLevel)).", valueName: "N"))
    var pngCompression: Int?

    @Flag(help: "PNG: write an Adam7-interlaced file.")
    var pngInterlaced = false

    @Option(
        help: ArgumentHelp("PNG: reduce to a palette of at most N colours, 2 to 256 (lossy above the image's own count).", valueName: "N"))
    var pngPalette: Int?

    /// Checks the values, for a command's `validate()`.
    func check() throws {
        if let quality, !(1...100).contains(quality) { throw ValidationError("--quality takes 1 to 100, not \(quality)") }
        if let subsamplingText, EncodeOptions.ChromaSubsampling(rawValue: subsamplingText) == nil {
            throw ValidationError("--subsampling takes 444, 422 or 420, not \"\(subsamplingText)\"")
        }
        if let maxFileSize, maxFileSize < 1 { throw ValidationError("--max-file-size takes a number of bytes, not \(maxFileSize)") }
        if let webPMethod, !(0...6).contains(webPMethod) { throw ValidationError("--webp-method takes 0 to 6, not \(webPMethod)") }
        if let pngCompression, !(0...9).contains(pngCompression) {
            throw ValidationError("--png-compression takes 0 to 9, not \(pngCompression)")
        }
        if let pngPalette, !(2...256).contains(pngPalette) { throw ValidationError("--png-palette takes 2 to 256, not \(pngPalette)") }
    }

    /// The encoder options asked for; nil when none were, so that an image can be written as
    /// its original bytes.
    func options() -> EncodeOptions? {
        let pngAsked = pngCompression != nil || pngInterlaced || pngPalette != nil
        guard quality != nil || progressive || lossless || subsamplingText != nil || maxFileSize != nil || webPMethod != nil || pngAsked
        else { return nil }
        var options = EncodeOptions()
        if let quality { options.quality = Double(quality) / 100 }
        options.progressive = progressive
        options.lossless = lossless
        if let subsampling = subsamplingText.flatMap(EncodeOptions.ChromaSubsampling.init(rawValue:)) {
            options.chromaSubsampling = subsampling
        }
        options.maximumFileSize = maxFileSize
        if let webPMethod { options.webPMethod = webPMethod }
        if let pngCompression { options.pngCompressionLevel = pngCompression }
        options.pngInterlaced = pngInterlaced
        options.pngPaletteColors = pngPalette
        return options
    }
}

/// A failure of the work (exit status 1) with its reason, printed on stderr.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Prints on stderr.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// Turns an Encodable value into one line of JSON.
func jsonLine(_ value: some Encodable) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    return String(decoding: (try? encoder.encode(value)) ?? Data("{}".utf8), as: UTF8.self)
}

extension Duration {
    var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }
}

extension String {
    /// Left-aligned in a column of `width` characters, with at least one space after.
    func padded(_ width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}

/// A duration flag's (or variable's) number of seconds as a `Duration`: above 0 and at most an
/// hour, the one bound every such flag has (`1e300` is a finite number, and its milliseconds
/// would trap converting to `Int64`). `name` is the flag the usage error names.
func flagDuration(_ seconds: Double, _ name: String) throws -> Duration {
    guard seconds > 0, seconds <= 3600 else { throw ValidationError("\(name) is above 0 and at most 3600 seconds") }
    return .milliseconds(Int64(seconds * 1000))
}

/// Which frame of a video `convert` and `info` read (in a build with the `Video` trait).
struct VideoFrameOptions: ParsableArguments {
    @Option(help: ArgumentHelp("For a video source: the time of the frame taken (default: the first keyframe).", valueName: "SECONDS"))
    var second: Double?

    @Flag(help: "For a video source: the last keyframe at or before --second instead of the exact frame (faster).")
    var keyframes = false

    func validate() throws {
        if let second, !(second >= 0 && second.isFinite) { throw ValidationError("--second is a time in seconds, 0 or more") }
    }

    /// `options` with the video frame these arguments choose.
    func applied(to options: DecodeOptions) -> DecodeOptions {
        var options = options
        options.video.second = second
        options.video.keyframesOnly = keyframes
        return options
    }
}
