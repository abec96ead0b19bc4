import ArgumentParser
import Foundation
import Logging
import WebImage
import WebImageServer
import WebImageGCS
import WebImageS3

/// `serve`'s flags over its `WEBIMAGE_*` variables over imgproxy's `IMGPROXY_*` ones, checked and
/// turned into the server's configuration. A flag given wins; a variable fills in a flag not
/// given, a `WEBIMAGE_*` one before its imgproxy counterpart (``ImgproxyEnvironment``).
struct ServeSettings {
    var configuration = ImageServerConfiguration()
    var logLevel = Logger.Level.info
    /// `--log-format json`: JSON lines instead of text.
    var logsJSON = false
    /// `WEBIMAGE_TRACING` (imgproxy's `IMGPROXY_OPEN_TELEMETRY_ENABLE`): traces on or off
    /// whatever the `OTEL_*` variables say; nil leaves it to them (``TraceExport``).
    var tracing: Bool?
    /// What start-up reports about the environment: imgproxy settings not supported here.
    var warnings: [String] = []

    init(command: ServeCommand, environment: [String: String]) throws {
        let imgproxy = try ImgproxyEnvironment(environment: environment).translate()
        warnings = imgproxy.warnings
        let read = EnvironmentReader(environment: imgproxy.variables.merging(environment) { _, own in own })
        if let bind = command.bind ?? read.text("BIND") {
            (configuration.host, configuration.port) = try Self.address(bind, "--bind")
        }
        if let bind = command.opsBind ?? read.text("OPS_BIND") {
            let (host, port) = try Self.address(bind, "--ops-bind")
            (configuration.operationsHost, configuration.operationsPort) = (host, port)
        }
        let keys = try command.key.ifEmpty(Self.lines(ofFile: command.keyFile ?? read.text("KEY_FILE"), "--key-file") ?? read.list("KEY"))
        let salts = try command.salt.ifEmpty(
            Self.lines(ofFile: command.saltFile ?? read.text("SALT_FILE"), "--salt-file") ?? read.list("SALT"))
        guard keys.count == salts.count else {
            throw ValidationError("give one --salt for each --key (\(keys.count) keys, \(salts.count) salts)")
        }
        configuration.signingKeys = try zip(keys, salts).map { key, salt in
            guard let pair = SigningKey(hexKey: key, hexSalt: salt) else {
                throw ValidationError("--key and --salt are hex; \"\(key)\" / \"\(salt)\" is not")
            }
            return pair
        }
        if let size = try command.signatureSize ?? read.integer("SIGNATURE_SIZE") {
            guard (1...32).contains(size) else { throw ValidationError("--signature-size is 1-32") }
            configuration.signatureSize = size
        }
        configuration.allowsUnsigned = try command.allowUnsigned || read.boolean("ALLOW_UNSIGNED")
        configuration.allowsLoopbackSources = try command.allowLoopbackSources || read.boolean("ALLOW_LOOPBACK_SOURCES")
        // Checked by the server's own list (http(s), s3:// and local:/// entries, imgproxy's
        // `*`) in validate() below, so an application configuring the library is checked alike.
        configuration.allowedSources = (command.allowedSources.map { Self.split($0) } ?? read.list("ALLOWED_SOURCES"))
        configuration.autoWebP = try command.autoWebp || read.boolean("AUTO_WEBP")
        configuration.autoAVIF = try command.autoAvif || read.boolean("AUTO_AVIF")
        configuration.autoJXL = try command.autoJxl || read.boolean("AUTO_JXL")
        configuration.enforceWebP = try command.enforceWebp || read.boolean("ENFORCE_WEBP")
        configuration.enforceAVIF = try command.enforceAvif || read.boolean("ENFORCE_AVIF")
        configuration.enforceJXL = try command.enforceJxl || read.boolean("ENFORCE_JXL")
        if let names = command.preferredFormats.map({ Self.split($0) }) ?? read.text("PREFERRED_FORMATS").map({ Self.split($0) }) {
            configuration.preferredFormats = try Self.formats(names, "--preferred-formats")
            guard !configuration.preferredFormats.isEmpty else { throw ValidationError("--preferred-formats names at least one format") }
        }
        let skipped = command.skipProcessingFormats.map { Self.split($0) } ?? read.list("SKIP_PROCESSING_FORMATS")
        configuration.skipProcessingFormats = Set(try Self.formats(skipped, "--skip-processing-formats"))
        if let directory = command.resultCacheDir ?? read.text("RESULT_CACHE_DIR") {
            configuration.cacheDirectory = URL(fileURLWithPath: directory)
        }
        try positive(command.resultCacheSize ?? read.integer("RESULT_CACHE_SIZE"), "--result-cache-size") {
            configuration.resultCacheBytes = $0
        }
        if let bytes = try command.resultMemoryCacheSize ?? read.integer("RESULT_MEMORY_CACHE_SIZE") {
            guard bytes >= 0 else { throw ValidationError("--result-memory-cache-size is 0 or more") }
            configuration.resultMemoryCacheBytes = bytes
        }
        if let megapixels = try command.maxSrcResolution ?? read.number("MAX_SRC_RESOLUTION") {
            guard megapixels > 0, megapixels <= 1000 else { throw ValidationError("--max-src-resolution is above 0 and at most 1000") }
            configuration.maximumSourceMegapixels = megapixels
        }
        try positive(command.maxSrcBytes ?? read.integer("MAX_SRC_BYTES"), "--max-src-bytes") { configuration.maximumSourceBytes = $0 }
        try positive(command.maxAnimationFrames ?? read.integer("MAX_ANIMATION_FRAMES"), "--max-animation-frames") {
            configuration.maximumAnimationFrames = $0
        }
        try positive(command.maxResultDimension ?? read.integer("MAX_RESULT_DIMENSION"), "--max-result-dimension") {
            configuration.maximumResultDimension = $0
        }
        if let megapixels = try command.maxAnimationFrameResolution ?? read.number("MAX_ANIMATION_FRAME_RESOLUTION") {
            guard megapixels >= 0, megapixels <= 1000 else {
                throw ValidationError("--max-animation-frame-resolution is 0 or more and at most 1000")
            }
            configuration.maximumAnimationFrameMegapixels = megapixels
        }
        configuration.allowsSecurityOptions = try command.allowSecurityOptions || read.boolean("ALLOW_SECURITY_OPTIONS")
        if let megapixels = try command.maxResultResolution ?? read.number("MAX_RESULT_RESOLUTION") {
            guard megapixels > 0, megapixels <= 400 else { throw ValidationError("--max-result-resolution is above 0 and at most 400") }
            configuration.maximumResultMegapixels = megapixels
        }
        try positive(command.concurrency ?? read.integer("CONCURRENCY"), "--concurrency") { configuration.concurrency = $0 }
        if let queue = try command.queue ?? read.integer("QUEUE") {
            guard queue >= 0 else { throw ValidationError("--queue is 0 or more") }
            configuration.queueLength = queue
        }
        try positive(command.ttl ?? read.integer("TTL"), "--ttl") { configuration.resultTTL = $0 }
        var presets = command.preset.isEmpty ? read.list("PRESET") : command.preset
        if let path = command.presetsPath ?? read.text("PRESETS_PATH") {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw ValidationError("--presets-path: cannot read \(path)")
            }
            presets += text.split(whereSeparator: \.isNewline).map(String.init)
        }

        // Durations in seconds, each above 0 and at most an hour.
        let durations: [(Double?, String, WritableKeyPath<ImageServerConfiguration, Duration>)] = [
            (try command.downloadTimeout ?? read.number("DOWNLOAD_TIMEOUT"), "--download-timeout", \.downloadTimeout),
            (try command.requestTimeout ?? read.number("REQUEST_TIMEOUT"), "--request-timeout", \.requestTimeout),
            (try command.processingTimeout ?? read.number("PROCESSING_TIMEOUT"), "--processing-timeout", \.processingTimeout),
            (try command.readRequestTimeout ?? read.number("READ_REQUEST_TIMEOUT"), "--read-request-timeout", \.readRequestTimeout),
            (try command.writeResponseTimeout ?? read.number("WRITE_RESPONSE_TIMEOUT"), "--write-response-timeout", \.writeResponseTimeout),
        ]
        for (seconds, flag, field) in durations {
            if let seconds { configuration[keyPath: field] = try flagDuration(seconds, flag) }
        }
        if let seconds = try command.sourceKeepAliveTimeout ?? read.number("SOURCE_KEEP_ALIVE_TIMEOUT") {
            // 0 is a setting here: no connection to a source is reused.
            configuration.sourceKeepAliveTimeout = seconds == 0 ? .zero : try flagDuration(seconds, "--source-keep-alive-timeout")
        }
        if let seconds = try command.gracefulStopTimeout ?? read.number("GRACEFUL_STOP_TIMEOUT") {
            configuration.gracefulStopTimeout = try flagDuration(seconds, "--graceful-stop-timeout")
        }
        if let seconds = try command.drainGrace ?? read.number("DRAIN_GRACE") {
            // 0 is a setting here: idle connections close at once, as Hummingbird's own drain does.
            configuration.drainGrace = seconds == 0 ? .zero : try flagDuration(seconds, "--drain-grace")
        }
        try positive(command.maxDownloadsPerHost ?? read.integer("MAX_DOWNLOADS_PER_HOST"), "--max-downloads-per-host") {
            configuration.maximumDownloadsPerHost = $0
        }
        if let redirects = try command.maxRedirects ?? read.integer("MAX_REDIRECTS") {
            guard redirects >= 0 else { throw ValidationError("--max-redirects is 0 or more") }
            configuration.maximumRedirects = redirects
        }
        try positive(command.idleTimeout ?? read.integer("IDLE_TIMEOUT"), "--idle-timeout") { configuration.idleTimeout = $0 }
        if let clients = try command.maxClients ?? read.integer("MAX_CLIENTS") {
            guard clients >= 0 else { throw ValidationError("--max-clients is 0 (no limit) or more") }
            configuration.maximumClients = clients
        }
        if let quality = try command.quality ?? read.integer("QUALITY") {
            guard (1...100).contains(quality) else { throw ValidationError("--quality is 1-100") }
            configuration.defaultQuality = quality
        }
        for pair in command.formatQuality.map({ Self.split($0) }) ?? read.list("FORMAT_QUALITY") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard parts.count == 2, let format = ImageFormat(rawValue: parts[0] == "jpg" ? "jpeg" : parts[0]),
                let quality = Int(parts[1]), (1...100).contains(quality)
            else {
                throw ValidationError("--format-quality is FORMAT=QUALITY pairs with qualities 1-100, not \"\(pair)\"")
            }
            configuration.formatQuality[format] = quality
        }
        configuration.playground = try command.playground || read.boolean("PLAYGROUND")
        configuration.playgroundToken = command.playgroundToken ?? read.text("PLAYGROUND_TOKEN")
        if configuration.playgroundToken != nil, !configuration.playground {
            throw ValidationError("--playground-token needs --playground")
        }
        configuration.statusToken = command.statusToken ?? read.text("STATUS_TOKEN")
        configuration.trustedProxies = try (command.trustedProxies.map { Self.split($0) } ?? read.list("TRUSTED_PROXIES")).map { text in
            guard let network = IPNetwork(text.contains("/") ? text : text + (text.contains(":") ? "/128" : "/32")) else {
                throw ValidationError("--trusted-proxies: \"\(text)\" is not an address or network")
            }
            return network
        }
        if let header = command.clientIPHeader ?? read.text("CLIENT_IP_HEADER") {
            guard let parsed = ClientIPHeader(rawValue: header.lowercased()) else {
                throw ValidationError("--client-ip-header takes x-forwarded-for, x-real-ip or forwarded, not \"\(header)\"")
            }
            configuration.clientIPHeader = parsed
        }
        configuration.statusPage = try command.statusPage ?? read.boolean("STATUS_PAGE", default: true)
        if let prefix = command.pathPrefix ?? read.text("PATH_PREFIX") {
            guard prefix.isEmpty || (prefix.hasPrefix("/") && !prefix.hasSuffix("/")) else {
                throw ValidationError("--path-prefix starts with / and does not end with one, as /images")
            }
            configuration.pathPrefix = prefix
        }
        configuration.secret = command.secret ?? read.text("SECRET")
        configuration.sourceRewriting.baseURL = command.baseUrl ?? read.text("BASE_URL") ?? ""
        if let rules = command.urlReplacements ?? read.text("URL_REPLACEMENTS") {
            do {
                configuration.sourceRewriting.replacements = try SourceRewriting.replacements(parsing: rules)
            } catch {
                throw ValidationError("--url-replacements: \(error.reason)")
            }
        }
        configuration.base64URLIncludesFilename = try command.base64UrlIncludesFilename || read.boolean("BASE64_URL_INCLUDES_FILENAME")
        configuration.onlyPresets = try command.onlyPresets || read.boolean("ONLY_PRESETS")
        if let names = command.allowedProcessingOptions.map({ Self.split($0) })
            ?? read.text("ALLOWED_PROCESSING_OPTIONS").map({ Self.split($0) })
        {
            configuration.allowedProcessingOptions = Set(names)
        }
        configuration.enableClientHints = try command.enableClientHints || read.boolean("ENABLE_CLIENT_HINTS")
        try setFallbackImage(command: command, read: read)
        try setWatermark(command: command, read: read)
        try setEncoding(command: command, read: read)
        configuration.setsCanonicalHeader = try command.setCanonicalHeader || read.boolean("SET_CANONICAL_HEADER")
        configuration.localFilesystemRoot = command.localFilesystemRoot ?? read.text("LOCAL_FILESYSTEM_ROOT")
        try setS3Sources(command: command, read: read)
        try setGCSSources(read: read)
        try setResultBucket(command: command, read: read)
        if let agent = command.userAgent ?? read.text("USER_AGENT") { configuration.userAgent = agent }
        configuration.ignoresSSLVerification = try command.ignoreSslVerification || read.boolean("IGNORE_SSL_VERIFICATION")
        configuration.stripMetadata = try command.stripMetadata ?? read.boolean("STRIP_METADATA", default: true)
        configuration.stripColorProfile = try command.stripColorProfile ?? read.boolean("STRIP_COLOR_PROFILE", default: true)
        configuration.autoRotate = try command.autoRotate ?? read.boolean("AUTO_ROTATE", default: true)
        configuration.keepCopyright = try command.keepCopyright ?? read.boolean("KEEP_COPYRIGHT", default: true)
        configuration.enforceThumbnail = try command.enforceThumbnail || read.boolean("ENFORCE_THUMBNAIL")
        configuration.enablesDebugHeaders = try command.enableDebugHeaders || read.boolean("ENABLE_DEBUG_HEADERS")
        try setUnsharpMasking(command: command, read: read)
        try setAutoquality(command: command, read: read)
        if let separator = command.argumentsSeparator ?? read.text("ARGUMENTS_SEPARATOR") {
            guard !separator.isEmpty, !separator.contains("/") else {
                throw ValidationError("--arguments-separator is not empty and has no /")
            }
            configuration.argumentsSeparator = separator
        }
        configuration.usesETag = try command.etag ?? read.boolean("ETAG", default: true)
        configuration.etagBuster = command.etagBuster ?? read.text("ETAG_BUSTER") ?? ""
        configuration.usesLastModified = try command.lastModified ?? read.boolean("LAST_MODIFIED", default: true)
        if let text = command.lastModifiedBuster ?? read.text("LAST_MODIFIED_BUSTER") {
            guard let date = ISO8601DateFormatter().date(from: text) else {
                throw ValidationError("--last-modified-buster is an RFC 3339 time such as 2026-01-01T00:00:00Z, not \"\(text)\"")
            }
            configuration.lastModifiedBuster = date
        }
        configuration.trustedSignatures = Set(
            command.trustedSignatures.map { Self.split($0) } ?? read.list("TRUSTED_SIGNATURES"))
        configuration.allowOrigin = command.allowOrigin ?? read.text("ALLOW_ORIGIN")
        if let path = command.healthCheckPath ?? read.text("HEALTH_CHECK_PATH") {
            guard path.hasPrefix("/") else { throw ValidationError("--health-check-path starts with /") }
            configuration.healthCheckPath = path
        }
        if let level = command.logLevel ?? read.text("LOG_LEVEL") {
            guard let parsed = Logger.Level(rawValue: level.lowercased()) else {
                throw ValidationError("--log-level: unknown level \"\(level)\"")
            }
            logLevel = parsed
        }
        if let format = command.logFormat ?? read.text("LOG_FORMAT") {
            guard ["text", "json"].contains(format.lowercased()) else {
                throw ValidationError("--log-format is text or json, not \"\(format)\"")
            }
            logsJSON = format.lowercased() == "json"
        }
        tracing = try read.optionalBoolean("TRACING")
        // Read with the arguments separator; each is applied once when the server is made
        // (OptionsParser.validatePresets), so a typo fails the start rather than every request.
        do throws(ProxyError) {
            configuration.presets = try OptionsParser.presets(parsing: presets, separator: configuration.argumentsSeparator)
        } catch {
            throw ValidationError("--preset: \(error.reason)")
        }
        guard !configuration.signingKeys.isEmpty || configuration.allowsUnsigned else {
            throw ValidationError("give a signing key (--key HEX --salt HEX) or --allow-unsigned")
        }
        do { try configuration.validate() } catch { throw ValidationError(error.message ?? error.description) }
    }

    /// An image the server is configured with, from the first of its base64 data, file (read
    /// now) and URL that is given (imgproxy's order); nil when none is.
    private static func imageSource(data: String?, path: String?, url: String?, flag: String) throws -> ConfiguredImageSource? {
        if let data {
            guard let bytes = Data(base64Encoded: data.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw ValidationError("--\(flag)-data is not base64")
            }
            return .data(bytes)
        }
        if let path {
            guard let bytes = FileManager.default.contents(atPath: path) else {
                throw ValidationError("--\(flag)-path: cannot read \(path)")
            }
            return .data(bytes)
        }
        if let url {
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? "") else {
                throw ValidationError("--\(flag)-url is not an http(s) URL")
            }
            return .url(parsed)
        }
        return nil
    }

    /// The encoder settings, each within imgproxy's range (`vips/config.go`).
    private mutating func setEncoding(command: ServeCommand, read: EnvironmentReader) throws {
        configuration.encoding.jpegProgressive = try command.jpegProgressive || read.boolean("JPEG_PROGRESSIVE")
        configuration.encoding.pngInterlaced = try command.pngInterlaced || read.boolean("PNG_INTERLACED")
        configuration.encoding.pngQuantize = try command.pngQuantize || read.boolean("PNG_QUANTIZE")
        if let name = command.webpPreset ?? read.text("WEBP_PRESET") {
            guard let preset = WebPEncodingPreset(rawValue: name.lowercased()) else {
                throw ValidationError(
                    "--webp-preset is one of \(WebPEncodingPreset.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(name)\"")
            }
            configuration.encoding.webPPreset = preset
        }
        let ranges: [(Int?, ClosedRange<Int>, String, WritableKeyPath<EncoderSettings, Int>)] = [
            (try command.webpEffort ?? read.integer("WEBP_EFFORT"), 1...6, "--webp-effort", \.webPEffort),
            (try command.avifSpeed ?? read.integer("AVIF_SPEED"), 0...9, "--avif-speed", \.avifSpeed),
            (try command.jxlEffort ?? read.integer("JXL_EFFORT"), 1...9, "--jxl-effort", \.jxlEffort),
            (try command.pngCompression ?? read.integer("PNG_COMPRESSION"), 0...9, "--png-compression", \.pngCompressionLevel),
            (
                try command.pngQuantizationColors ?? read.integer("PNG_QUANTIZATION_COLORS"), 2...256, "--png-quantization-colors",
                \.pngQuantizationColors
            ),
        ]
        for (value, range, flag, field) in ranges {
            guard let value else { continue }
            guard range.contains(value) else { throw ValidationError("\(flag) is \(range.lowerBound) to \(range.upperBound)") }
            configuration.encoding[keyPath: field] = value
        }
    }

    /// Unsharp masking's mode, weight and divider (imgproxy Pro's `IMGPROXY_UNSHARP_MASKING_*`).
    private mutating func setUnsharpMasking(command: ServeCommand, read: EnvironmentReader) throws {
        let modeName = command.unsharpMaskingMode ?? read.text("UNSHARP_MASKING_MODE") ?? "none"
        guard let mode = ProcessingOptions.UnsharpMasking.Mode(rawValue: modeName) else {
            throw ValidationError("--unsharp-masking-mode is none, auto or always, not \"\(modeName)\"")
        }
        var masking = ProcessingOptions.UnsharpMasking(mode: mode)
        for (value, flag, field) in [
            (
                try command.unsharpMaskingWeight ?? read.number("UNSHARP_MASKING_WEIGHT"), "--unsharp-masking-weight",
                \ProcessingOptions.UnsharpMasking.weight
            ),
            (try command.unsharpMaskingDivider ?? read.number("UNSHARP_MASKING_DIVIDER"), "--unsharp-masking-divider", \.divider),
        ] {
            guard let value else { continue }
            guard value > 0 else { throw ValidationError("\(flag) is above 0") }
            masking[keyPath: field] = value
        }
        configuration.unsharpMasking = mode == .none && masking == ProcessingOptions.UnsharpMasking(mode: .none) ? nil : masking
    }

    /// Autoquality's method and bounds (imgproxy Pro's `IMGPROXY_AUTOQUALITY_*`): the size
    /// method or none.
    private mutating func setAutoquality(command: ServeCommand, read: EnvironmentReader) throws {
        var defaults = configuration.autoqualityDefaults
        defaults.target = try command.autoqualityTarget ?? read.integer("AUTOQUALITY_TARGET") ?? defaults.target
        defaults.minimum = try command.autoqualityMin ?? read.integer("AUTOQUALITY_MIN") ?? defaults.minimum
        defaults.maximum = try command.autoqualityMax ?? read.integer("AUTOQUALITY_MAX") ?? defaults.maximum
        guard defaults.target >= 0, 1 <= defaults.minimum, defaults.minimum <= defaults.maximum, defaults.maximum <= 100 else {
            throw ValidationError("autoquality's target is 0 or more and 1 <= min <= max <= 100")
        }
        configuration.autoqualityDefaults = defaults
        switch command.autoqualityMethod ?? read.text("AUTOQUALITY_METHOD") ?? "none" {
        case "none": configuration.autoqualityByDefault = false
        case "size":
            guard defaults.target > 0 else { throw ValidationError("the size autoquality needs --autoquality-target above 0") }
            configuration.autoqualityByDefault = true
        case let other:
            throw ValidationError("--autoquality-method is none or size (dssim and ml are not supported here), not \"\(other)\"")
        }
    }

    /// The watermark: its image and the opacity every URL's is multiplied by.
    private mutating func setWatermark(command: ServeCommand, read: EnvironmentReader) throws {
        guard
            let source = try Self.imageSource(
                data: command.watermarkData ?? read.text("WATERMARK_DATA"), path: command.watermarkPath ?? read.text("WATERMARK_PATH"),
                url: command.watermarkUrl ?? read.text("WATERMARK_URL"), flag: "watermark")
        else { return }
        var watermark = WatermarkImage(source: source)
        if let opacity = try command.watermarkOpacity ?? read.number("WATERMARK_OPACITY") {
            guard (0...1).contains(opacity) else { throw ValidationError("--watermark-opacity is between 0 and 1") }
            watermark.opacity = opacity
        }
        configuration.watermark = watermark
    }

    /// The fallback image: its bytes (base64 or a file, read now) or its URL, its status and TTL.
    private mutating func setFallbackImage(command: ServeCommand, read: EnvironmentReader) throws {
        guard
            let source = try Self.imageSource(
                data: command.fallbackImageData ?? read.text("FALLBACK_IMAGE_DATA"),
                path: command.fallbackImagePath ?? read.text("FALLBACK_IMAGE_PATH"),
                url: command.fallbackImageUrl ?? read.text("FALLBACK_IMAGE_URL"), flag: "fallback-image")
        else { return }
        var fallback = FallbackImage(source: source)
        if let status = try command.fallbackImageHttpCode ?? read.integer("FALLBACK_IMAGE_HTTP_CODE") {
            guard status == 0 || (100...599).contains(status) else { throw ValidationError("--fallback-image-http-code is 0 or 100-599") }
            fallback.status = status
        }
        if let ttl = try command.fallbackImageTtl ?? read.integer("FALLBACK_IMAGE_TTL") {
            guard ttl >= 0 else { throw ValidationError("--fallback-image-ttl is 0 or more") }
            fallback.ttl = ttl
        }
        configuration.fallbackImage = fallback
    }

    /// The non-empty lines of the file at `path`, trimmed; nil when no path is given.
    private static func lines(ofFile path: String?, _ option: String) throws -> [String]? {
        guard let path else { return nil }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ValidationError("\(option): cannot read \(path)")
        }
        return text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// `HOST:PORT` (an IPv6 host in brackets).
    static func address(_ bind: String, _ option: String) throws -> (host: String, port: Int) {
        guard let colon = bind.lastIndex(of: ":"), let port = Int(bind[bind.index(after: colon)...]), (0...65535).contains(port) else {
            throw ValidationError("\(option) is HOST:PORT, not \"\(bind)\"")
        }
        return (String(bind[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port)
    }

    private func positive(_ value: Int?, _ name: String, _ set: (Int) -> Void) throws {
        guard let value else { return }
        guard value > 0 else { throw ValidationError("\(name) is above 0") }
        set(value)
    }

    /// Format names as imgproxy writes them (`jpg` for JPEG), each known.
    private static func formats(_ names: [String], _ option: String) throws -> [ImageFormat] {
        try names.map { name in
            guard let format = ImageFormat(rawValue: name.lowercased() == "jpg" ? "jpeg" : name.lowercased()) else {
                throw ValidationError("\(option): unknown format \"\(name)\"")
            }
            return format
        }
    }

    /// `s3://` sources, with imgproxy's settings over the AWS SDKs' (credentials always come from
    /// the AWS chain: `AWS_*` variables and the shared files).
    /// `gs://` sources (imgproxy's `IMGPROXY_USE_GCS`, `_GCS_KEY`, `_GCS_ENDPOINT`,
    /// `_GCS_ALLOWED_BUCKETS`, `_GCS_DENIED_BUCKETS`), read from the environment only; without a
    /// key, Google's default credentials.
    private mutating func setGCSSources(read: EnvironmentReader) throws {
        guard try read.boolean("USE_GCS") else { return }
        let client: GCSConfiguration
        do {
            client = try GCSConfiguration.fromEnvironment(
                key: read.text("GCS_KEY"), endpoint: read.text("GCS_ENDPOINT"), environment: read.environment)
        } catch {
            throw ValidationError("GCS sources: \(error.message ?? error.description)")
        }
        configuration.gcsSources = GCSSources(
            client: client, allowedBuckets: read.list("GCS_ALLOWED_BUCKETS"), deniedBuckets: read.list("GCS_DENIED_BUCKETS"))
    }

    private mutating func setS3Sources(command: ServeCommand, read: EnvironmentReader) throws {
        configuration.sourceURLQuerySeparator =
            command.sourceUrlQuerySeparator ?? read.environment["WEBIMAGE_SOURCE_URL_QUERY_SEPARATOR"] ?? "?"
        guard try command.useS3 || read.boolean("USE_S3") else { return }
        configuration.s3Sources = S3Sources(
            client: try Self.s3Client(
                "S3 sources", read: read, region: command.s3Region ?? read.text("S3_REGION"),
                endpoint: command.s3Endpoint ?? read.text("S3_ENDPOINT"),
                pathStyle: try command.s3EndpointUsePathStyle ?? read.boolean("S3_ENDPOINT_USE_PATH_STYLE", default: true)),
            allowedBuckets: command.s3AllowedBuckets.map { Self.split($0) } ?? read.list("S3_ALLOWED_BUCKETS"),
            deniedBuckets: command.s3DeniedBuckets.map { Self.split($0) } ?? read.list("S3_DENIED_BUCKETS"))
    }

    /// The bucket the fleet's results are shared in (`--result-bucket`, imgproxy Pro's
    /// `IMGPROXY_CACHE_USE=s3` with `IMGPROXY_CACHE_BUCKET`), with its own region, endpoint and
    /// addressing over the AWS settings.
    private mutating func setResultBucket(command: ServeCommand, read: EnvironmentReader) throws {
        if let use = read.text("CACHE_USE"), use.lowercased() != "s3" {
            throw ValidationError(
                "IMGPROXY_CACHE_USE: only s3 is supported here, not \(use) (the disk result cache is always on, in --result-cache-dir)")
        }
        let bucket = command.resultBucket ?? (read.text("CACHE_USE") == nil ? nil : read.text("CACHE_BUCKET"))
        if read.text("CACHE_USE") != nil, bucket == nil { throw ValidationError("IMGPROXY_CACHE_USE=s3 needs IMGPROXY_CACHE_BUCKET") }
        guard let bucket else { return }
        let client = try Self.s3Client(
            "the result bucket", read: read, region: command.resultBucketRegion ?? read.text("CACHE_S3_REGION"),
            endpoint: command.resultBucketEndpoint ?? read.text("CACHE_S3_ENDPOINT"),
            pathStyle: try command.resultBucketPathStyle ?? read.boolean("CACHE_S3_ENDPOINT_USE_PATH_STYLE", default: true))
        configuration.resultBucket = ResultBucketSettings(
            client: client, bucket: bucket, keyPrefix: command.resultBucketPrefix ?? read.text("CACHE_PATH_PREFIX") ?? "",
            reportsErrors: try command.resultBucketReportErrors || read.boolean("CACHE_REPORT_ERRORS"))
    }

    /// An S3 client's settings: the AWS SDKs' (credentials, region, endpoint) with the region
    /// and endpoint given here over them, and the addressing given (imgproxy's default is path
    /// style, for any endpoint). `use` names what it is for in an error.
    private static func s3Client(_ use: String, read: EnvironmentReader, region: String?, endpoint: String?, pathStyle: Bool) throws
        -> S3Configuration
    {
        do {
            var client = try S3Configuration.fromEnvironment(read.environment)
            if let region { client.region = region }
            if let endpoint { client.endpoint = try S3Configuration.endpointURL(endpoint) }
            client.usePathStyle = pathStyle
            return client
        } catch {
            throw ValidationError("\(use): \(error.message ?? error.description)")
        }
    }

    static func split(_ list: String) -> [String] {
        list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

/// `WEBIMAGE_*` variables, read and checked like the flags they stand for.
struct EnvironmentReader {
    let environment: [String: String]

    func text(_ name: String) -> String? {
        environment["WEBIMAGE_" + name].flatMap { $0.isEmpty ? nil : $0 }
    }

    func list(_ name: String) -> [String] {
        text(name).map { ServeSettings.split($0) } ?? []
    }

    func integer(_ name: String) throws -> Int? {
        guard let text = text(name) else { return nil }
        guard let value = Int(text) else { throw ValidationError("WEBIMAGE_\(name): \"\(text)\" is not a whole number") }
        return value
    }

    func number(_ name: String) throws -> Double? {
        guard let text = text(name) else { return nil }
        guard let value = Double(text), value.isFinite else { throw ValidationError("WEBIMAGE_\(name): \"\(text)\" is not a number") }
        return value
    }

    /// A boolean variable, nil when it is not set.
    func optionalBoolean(_ name: String) throws -> Bool? {
        text(name) == nil ? nil : try boolean(name)
    }

    func boolean(_ name: String, default unset: Bool = false) throws -> Bool {
        guard let text = text(name)?.lowercased() else { return unset }
        switch text {
        case "1", "true", "yes": return true
        case "0", "false", "no": return false
        default: throw ValidationError("WEBIMAGE_\(name): \"\(text)\" is not 1, true, yes, 0, false or no")
        }
    }
}

extension Array {
    /// The array, or `replacement` when it is empty.
    fileprivate func ifEmpty(_ replacement: @autoclosure () throws -> [Element]) rethrows -> [Element] {
        isEmpty ? try replacement() : self
    }
}
