import ArgumentParser
import Foundation
import Logging
import WebImage
import WebImageServer

/// `webimage serve`: the image proxy (imgproxy's URL format) on Hummingbird.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the image proxy: imgproxy-compatible signed URLs, resized and converted on the fly.",
        discussion: """
            Every option can also be set by its environment variable, WEBIMAGE_ and the option's \
            name in capitals with _ for - (--max-src-bytes: WEBIMAGE_MAX_SRC_BYTES); a flag given \
            on the command line wins. Lists (--key, --salt, --allowed-sources, --preset) take \
            commas in the variable; booleans take 1, true or yes. imgproxy's IMGPROXY_* variables \
            are read too, with imgproxy's parsing, where a WEBIMAGE_ one is not set; those not \
            supported are named in a warning at start (docs/imgproxy-configuration.md). SIGTERM \
            and SIGINT stop the server gracefully: requests in flight finish, new ones are refused.

            Example:
              webimage serve --key 736563726574 --salt 68656C6C6F --auto-webp
              curl http://127.0.0.1:8080/oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png
            """
    )

    @Option(help: ArgumentHelp("Listen on this address (default 127.0.0.1:8080).", valueName: "HOST:PORT"))
    var bind: String?

    @Option(help: ArgumentHelp("A signing key in hex (repeatable, paired with --salt in order, for rotation).", valueName: "HEX"))
    var key: [String] = []

    @Option(help: ArgumentHelp("A signing salt in hex (repeatable).", valueName: "HEX"))
    var salt: [String] = []

    @Option(
        help: ArgumentHelp(
            "A file of signing keys in hex, one a line (kept out of `ps`, unlike --key); paired with --salt-file's lines.",
            valueName: "PATH"))
    var keyFile: String?

    @Option(help: ArgumentHelp("A file of salts in hex, one a line, paired with --key-file's lines.", valueName: "PATH"))
    var saltFile: String?

    @Option(help: ArgumentHelp("Bytes of the HMAC a signature keeps, 1-32 (default 32).", valueName: "N"))
    var signatureSize: Int?

    @Flag(help: "Accept URLs with any signature (such as /unsafe/...). Logs a warning at start-up.")
    var allowUnsigned = false

    @Flag(help: "Allow sources on 127.0.0.0/8 and ::1 (tests and demos); every other non-public address stays refused.")
    var allowLoopbackSources = false

    @Option(
        help: ArgumentHelp(
            "Only fetch sources starting with one of these prefixes, comma-separated; * matches any characters but /.",
            valueName: "PREFIX,..."))
    var allowedSources: String?

    @Flag(help: "Answer WebP when the URL names no format and Accept lists image/webp (with Vary: Accept).")
    var autoWebp = false

    @Flag(help: "Answer AVIF likewise (before WebP when a client takes both).")
    var autoAvif = false

    @Flag(help: "Answer JPEG XL likewise (before AVIF and WebP when a client takes it).")
    var autoJxl = false

    @Option(
        help: ArgumentHelp(
            "Where results and sources are cached, one directory per server (default ~/.cache/webimage/serve).", valueName: "DIR"))
    var resultCacheDir: String?

    @Option(help: ArgumentHelp("The most bytes the result cache keeps (default 1 GiB).", valueName: "BYTES"))
    var resultCacheSize: Int?

    @Option(help: ArgumentHelp("The most bytes of recent results also kept in memory, 0 for none (default 64 MiB).", valueName: "BYTES"))
    var resultMemoryCacheSize: Int?

    @Option(help: ArgumentHelp("The most megapixels a source may declare, animation frames together (default 50).", valueName: "MP"))
    var maxSrcResolution: Double?

    @Option(help: ArgumentHelp("The most bytes read from a source (default 50 MiB).", valueName: "N"))
    var maxSrcBytes: Int?

    @Option(help: ArgumentHelp("The frames of an animated source kept, the first ones (default 100; 1 makes stills).", valueName: "N"))
    var maxAnimationFrames: Int?

    @Option(help: ArgumentHelp("The largest width or height of a result (default 8192).", valueName: "PIXELS"))
    var maxResultDimension: Int?

    @Option(
        help: ArgumentHelp(
            "The most pixels of a result, in megapixels; larger requests are scaled down to fit (default 40).", valueName: "MP"))
    var maxResultResolution: Double?

    @Option(
        help: ArgumentHelp(
            "The most pixels of each frame of an animation, in megapixels; above 0, animations are checked frame by frame (default 0).",
            valueName: "MP"))
    var maxAnimationFrameResolution: Double?

    @Flag(help: "URLs may set their own limits with msr, msfs, maf, mafr and mrd.")
    var allowSecurityOptions = false

    @Option(help: ArgumentHelp("Requests fetched and processed at once (default: the number of cores).", valueName: "N"))
    var concurrency: Int?

    @Option(help: ArgumentHelp("Requests that may wait for a slot; more are answered 503 (default 64).", valueName: "N"))
    var queue: Int?

    @Option(help: ArgumentHelp("Cache-Control max-age of results (default 31536000, a year).", valueName: "SECONDS"))
    var ttl: Int?

    @Option(help: ArgumentHelp("A named option list for pr:NAME, e.g. thumb=rs:fill:150:150/q:70 (repeatable).", valueName: "NAME=OPTIONS"))
    var preset: [String] = []

    @Option(help: ArgumentHelp("The most seconds a source download may take (default 10).", valueName: "SECONDS"))
    var downloadTimeout: Double?

    @Option(help: ArgumentHelp("Source downloads at once from one host (default 8).", valueName: "N"))
    var maxDownloadsPerHost: Int?

    @Option(help: ArgumentHelp("The most seconds a request may take before a 504 (default 30).", valueName: "SECONDS"))
    var requestTimeout: Double?

    @Option(help: ArgumentHelp("The most seconds processing one result may take before a 504 (default 20).", valueName: "SECONDS"))
    var processingTimeout: Double?

    @Option(
        help: ArgumentHelp(
            "Seconds an idle connection to a source's host is kept for reuse; 0 reuses none (default 60).", valueName: "SECONDS"))
    var sourceKeepAliveTimeout: Double?

    @Option(help: ArgumentHelp("Redirects followed per source (default 10).", valueName: "N"))
    var maxRedirects: Int?

    @Option(help: ArgumentHelp("Seconds an idle client connection stays open (default 60).", valueName: "SECONDS"))
    var idleTimeout: Int?

    @Option(help: ArgumentHelp("The most seconds a request may take to arrive whole (default 10).", valueName: "SECONDS"))
    var readRequestTimeout: Double?

    @Option(help: ArgumentHelp("The most seconds a response may take to be written whole (default 10).", valueName: "SECONDS"))
    var writeResponseTimeout: Double?

    @Option(help: ArgumentHelp("Client connections at once; at the limit new ones wait (default 2048, 0 for none).", valueName: "N"))
    var maxClients: Int?

    @Option(
        help: ArgumentHelp("Seconds a graceful stop waits for requests in flight (default: the request timeout + 5).", valueName: "SECONDS")
    )
    var gracefulStopTimeout: Double?

    @Option(
        help: ArgumentHelp(
            "Seconds a connection idle when a graceful stop begins stays open for a request already on its way (default 1).",
            valueName: "SECONDS")
    )
    var drainGrace: Double?

    @Option(help: ArgumentHelp("libwebp's preset for WebP results: default, photo, picture, drawing, icon, text.", valueName: "NAME"))
    var webpPreset: String?

    @Option(help: ArgumentHelp("Quality of lossy results when the URL gives none, 1-100 (default 80).", valueName: "Q"))
    var quality: Int?

    @Option(help: ArgumentHelp("Put in front of every source URL that does not start with it.", valueName: "URL"))
    var baseUrl: String?

    @Option(
        help: ArgumentHelp(
            "Rewrite source URLs first: PATTERN=REPLACEMENT rules separated by ;, * matching any characters but /, $1 naming it.",
            valueName: "RULES"))
    var urlReplacements: String?

    @Flag(help: "A base64 source may be followed by a file name segment, which is ignored.")
    var base64UrlIncludesFilename = false

    @Flag(help: "The options part of a path is one segment of preset names separated by :.")
    var onlyPresets = false

    @Option(help: ArgumentHelp("A file of presets, NAME=OPTIONS a line (# starts a comment).", valueName: "PATH"))
    var presetsPath: String?

    @Option(help: ArgumentHelp("The only option names URLs may use (presets may use any), comma-separated.", valueName: "NAME,..."))
    var allowedProcessingOptions: String?

    @Option(help: ArgumentHelp("Signatures accepted without checking, comma-separated.", valueName: "SIGNATURE,..."))
    var trustedSignatures: String?

    @Option(help: ArgumentHelp("The User-Agent of source requests.", valueName: "TEXT"))
    var userAgent: String?

    @Flag(help: "Fetch sources whose TLS certificate does not verify.")
    var ignoreSslVerification = false

    @Option(help: ArgumentHelp("An image answered when a source cannot be fetched.", valueName: "PATH"))
    var fallbackImagePath: String?

    @Option(help: ArgumentHelp("An image URL answered when a source cannot be fetched.", valueName: "URL"))
    var fallbackImageUrl: String?

    @Option(help: ArgumentHelp("A base64 image answered when a source cannot be fetched.", valueName: "BASE64"))
    var fallbackImageData: String?

    @Option(help: ArgumentHelp("The status of a fallback answer, 0 for the source's error status (default 200).", valueName: "CODE"))
    var fallbackImageHttpCode: Int?

    @Option(help: ArgumentHelp("The max-age of a fallback answer (default: --ttl).", valueName: "SECONDS"))
    var fallbackImageTtl: Int?

    @Flag(help: "Answers name their http(s) source in Link: <URL>; rel=\"canonical\".")
    var setCanonicalHeader = false

    @Flag(help: "JPEG results are progressive.")
    var jpegProgressive = false

    @Option(help: ArgumentHelp("WebP's effort, 1 to 6 (default 4).", valueName: "N"))
    var webpEffort: Int?

    @Option(help: ArgumentHelp("PNG's deflate level, 0 (fastest) to 9 (smallest; default 6).", valueName: "N"))
    var pngCompression: Int?

    @Flag(help: "PNG results are Adam7 interlaced.")
    var pngInterlaced = false

    @Flag(help: "PNG results are reduced to a palette (lossy, smaller; see --png-quantization-colors).")
    var pngQuantize = false

    @Option(help: ArgumentHelp("The most colours of a quantised PNG, 2 to 256 (default 256).", valueName: "N"))
    var pngQuantizationColors: Int?

    @Option(help: ArgumentHelp("AVIF's speed, 0 (slowest, smallest) to 9 (default 6).", valueName: "N"))
    var avifSpeed: Int?

    @Option(
        help: ArgumentHelp("JPEG XL's effort, 1 to 9 (default 7; lowered for results too large for its memory budget).", valueName: "N"))
    var jxlEffort: Int?

    @Option(help: ArgumentHelp("The folder local:///PATH sources are read from; nothing outside it is reachable.", valueName: "DIR"))
    var localFilesystemRoot: String?

    @Flag(help: "Read s3://BUCKET/KEY sources, with the AWS credentials the AWS SDKs would find (AWS_* variables, ~/.aws).")
    var useS3 = false

    @Option(help: ArgumentHelp("The S3 region (default AWS_REGION, else us-east-1).", valueName: "REGION"))
    var s3Region: String?

    @Option(help: ArgumentHelp("The S3 endpoint, for an S3-compatible store (default AWS_ENDPOINT_URL_S3, else AWS's).", valueName: "URL"))
    var s3Endpoint: String?

    @Option(help: ArgumentHelp("Path-style S3 addressing, ENDPOINT/BUCKET/KEY (default true, as imgproxy).", valueName: "BOOL"))
    var s3EndpointUsePathStyle: Bool?

    @Option(help: ArgumentHelp("The only buckets s3:// sources may name, comma-separated (default any).", valueName: "LIST"))
    var s3AllowedBuckets: String?

    @Option(help: ArgumentHelp("Buckets s3:// sources may never name, comma-separated.", valueName: "LIST"))
    var s3DeniedBuckets: String?

    @Option(help: ArgumentHelp("What ends an s3:// source's key and starts its version (default ?; empty for none).", valueName: "TEXT"))
    var sourceUrlQuerySeparator: String?

    @Option(help: ArgumentHelp("Share processed results in this S3 bucket, behind the memory and disk tiers.", valueName: "BUCKET"))
    var resultBucket: String?

    @Option(help: ArgumentHelp("Put before every result bucket key, as results/.", valueName: "PREFIX"))
    var resultBucketPrefix: String?

    @Option(help: ArgumentHelp("The result bucket's region (default the AWS settings').", valueName: "REGION"))
    var resultBucketRegion: String?

    @Option(help: ArgumentHelp("The result bucket's endpoint (default the AWS settings').", valueName: "URL"))
    var resultBucketEndpoint: String?

    @Option(help: ArgumentHelp("Path-style addressing for the result bucket (default true, as imgproxy).", valueName: "BOOL"))
    var resultBucketPathStyle: Bool?

    @Flag(help: "Answer 502 when the result bucket cannot be read, rather than processing without it.")
    var resultBucketReportErrors = false

    @Option(help: ArgumentHelp("The image wm lays over results.", valueName: "PATH"))
    var watermarkPath: String?

    @Option(help: ArgumentHelp("The URL of the image wm lays over results.", valueName: "URL"))
    var watermarkUrl: String?

    @Option(help: ArgumentHelp("The image wm lays over results, in base64.", valueName: "BASE64"))
    var watermarkData: String?

    @Option(help: ArgumentHelp("Multiplies every wm opacity, 0 to 1 (default 1).", valueName: "OPACITY"))
    var watermarkOpacity: Double?

    @Flag(inversion: .prefixedNo, help: "Strip metadata unless a URL says otherwise (default on).")
    var stripMetadata: Bool?

    @Flag(inversion: .prefixedNo, help: "Convert to sRGB and drop the profile unless a URL says otherwise (default on).")
    var stripColorProfile: Bool?

    @Flag(inversion: .prefixedNo, help: "Apply the EXIF orientation unless a URL says otherwise (default on).")
    var autoRotate: Bool?

    @Flag(
        inversion: .prefixedNo, help: "Keep the EXIF Copyright and Artist when stripping metadata unless a URL says otherwise (default on)."
    )
    var keepCopyright: Bool?

    @Flag(help: "Answer processed results with X-Origin-Width/-Height/-Content-Length and X-Result-Width/-Height.")
    var enableDebugHeaders = false

    @Flag(help: "Use a HEIF source's embedded thumbnail in place of its image unless a URL says otherwise.")
    var enforceThumbnail = false

    @Option(help: ArgumentHelp("Unsharp masking unless a URL says otherwise: none (default), auto or always.", valueName: "MODE"))
    var unsharpMaskingMode: String?

    @Option(help: ArgumentHelp("Unsharp masking's weight, above 0 (default 1).", valueName: "NUMBER"))
    var unsharpMaskingWeight: Double?

    @Option(help: ArgumentHelp("Unsharp masking's divider, above 0 (default 24).", valueName: "NUMBER"))
    var unsharpMaskingDivider: Double?

    @Option(help: ArgumentHelp("Autoquality for every URL: none (default) or size.", valueName: "METHOD"))
    var autoqualityMethod: String?

    @Option(help: ArgumentHelp("Autoquality's target size in bytes.", valueName: "BYTES"))
    var autoqualityTarget: Int?

    @Option(help: ArgumentHelp("Autoquality's lowest quality (default 70).", valueName: "QUALITY"))
    var autoqualityMin: Int?

    @Option(help: ArgumentHelp("Autoquality's highest quality (default 80).", valueName: "QUALITY"))
    var autoqualityMax: Int?

    @Option(help: ArgumentHelp("What separates an option's name and arguments (default :).", valueName: "TEXT"))
    var argumentsSeparator: String?

    @Flag(help: "Take the client's DPR and Width hints (and Sec-CH- forms) as default dpr and width.")
    var enableClientHints = false

    @Flag(inversion: .prefixedNo, help: "Send ETag and answer If-None-Match (default on).")
    var etag: Bool?

    @Option(help: ArgumentHelp("Mixed into every ETag: changing it makes clients fetch again.", valueName: "TEXT"))
    var etagBuster: String?

    @Flag(inversion: .prefixedNo, help: "Send the source's Last-Modified and answer If-Modified-Since (default on).")
    var lastModified: Bool?

    @Option(help: ArgumentHelp("A Last-Modified older than this RFC 3339 time is sent as it.", valueName: "TIME"))
    var lastModifiedBuster: String?

    @Flag(help: "Answer WebP to clients that accept it even when the URL names another format.")
    var enforceWebp = false

    @Flag(help: "Answer AVIF to clients that accept it even when the URL names another format (still sources).")
    var enforceAvif = false

    @Flag(help: "Answer JPEG XL to clients that accept it even when the URL names another format (still sources).")
    var enforceJxl = false

    @Option(
        help: ArgumentHelp(
            "For URLs without a format: keep the source's format when listed, else the first listed that fits (default jpeg,png,gif).",
            valueName: "FORMAT,..."))
    var preferredFormats: String?

    @Option(
        help: ArgumentHelp(
            "Sources in these formats are answered unprocessed unless a URL asks for another format.", valueName: "FORMAT,..."))
    var skipProcessingFormats: String?

    @Option(
        help: ArgumentHelp(
            "Quality by format when the URL gives none, over imgproxy's defaults webp=79,avif=63,jxl=77.", valueName: "FORMAT=Q,..."))
    var formatQuality: String?

    @Option(help: ArgumentHelp("trace, debug, info (default: one line per request), notice, warning or error.", valueName: "LEVEL"))
    var logLevel: String?

    @Option(help: ArgumentHelp("text (default) or json: one JSON object per line on standard error.", valueName: "FORMAT"))
    var logFormat: String?

    @Flag(help: "Serve /playground, a page to try options that signs the URLs it makes: loopback clients only, unless --playground-token.")
    var playground = false

    @Option(
        help: ArgumentHelp(
            "Open the playground to other clients that present this token (?token= or X-Playground-Token).", valueName: "TOKEN"))
    var playgroundToken: String?

    @Option(help: ArgumentHelp("Also serve /status to clients presenting this token (?token= or X-Status-Token).", valueName: "TOKEN"))
    var statusToken: String?

    @Option(
        help: ArgumentHelp(
            "Proxies (comma-separated addresses or networks) whose --client-ip-header names the client for the pages' loopback rule.",
            valueName: "NETWORKS"))
    var trustedProxies: String?

    @Option(
        help: ArgumentHelp(
            "The one header the trusted proxies name the client in: x-forwarded-for (default), x-real-ip or forwarded.",
            valueName: "HEADER"))
    var clientIPHeader: String?

    @Flag(inversion: .prefixedNo, help: "Serve /status, a page of the node's figures (default on).")
    var statusPage: Bool?

    @Option(help: ArgumentHelp("A prefix every route is under, such as /images (imgproxy's IMGPROXY_PATH_PREFIX).", valueName: "PATH"))
    var pathPrefix: String?

    @Option(help: ArgumentHelp("A token proxy requests must carry as Authorization: Bearer TOKEN.", valueName: "TOKEN"))
    var secret: String?

    @Option(help: ArgumentHelp("Access-Control-Allow-Origin of proxy answers (CORS), such as *.", valueName: "ORIGIN"))
    var allowOrigin: String?

    @Option(help: ArgumentHelp("A second path answering like /health.", valueName: "PATH"))
    var healthCheckPath: String?

    @Option(
        help: ArgumentHelp(
            "Serve /ready, /metrics and /status on this address instead of the public one (/health answers on both).",
            valueName: "HOST:PORT"))
    var opsBind: String?

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let settings = try ServeSettings(command: self, environment: environment)
        let traced = TraceExport.isRequested(switch: settings.tracing, environment: environment)
        LogOutput(level: settings.logLevel, json: settings.logsJSON, traced: traced).bootstrap()
        let tracing = try TraceExport.bootstrap(switch: settings.tracing, environment: environment)
        let server: ImageServer
        do {
            server = try ImageServer(configuration: settings.configuration)
        } catch {
            throw CommandFailure("cannot start: \(error.message ?? error.description)")
        }
        let logger = Logger(label: "webimage.server")
        for warning in settings.warnings { logger.warning("\(warning)") }
        let announce = Announcements(json: settings.logsJSON, logger: logger)
        Task { announce.say("listening", address: "http://\(settings.configuration.host):\(await server.port)", line: "listening on") }
        if settings.configuration.operationsPort != nil {
            Task {
                let address = "http://\(settings.configuration.operationsHost):\(await server.operationsPort)"
                announce.say("operations listening", address: address, line: "operations on")
            }
        }
        try await server.runUntilSignalled(alongside: tracing.map { [$0] } ?? [], onDrain: { announce.say("draining", line: "draining") })
    }
}

/// The lines scripts read on standard output: where the server listens (the port of
/// `--bind HOST:0` is learnt here), where its operations port listens, and that it drains. As
/// text, a plain line (`listening on http://HOST:PORT`) beside the same notice in the log; with
/// `--log-format json`, one JSON object like the log's lines, whatever the log level, so that every
/// line the process prints parses (`{"msg":"listening","address":"http://HOST:PORT",...}`).
struct Announcements: Sendable {
    let json: Bool
    let logger: Logger

    func say(_ message: String, address: String? = nil, line: String) {
        let metadata: Logger.Metadata = address.map { ["address": "\($0)"] } ?? [:]
        guard json else {
            logger.notice("\(message)", metadata: metadata)
            let text = ([line] + (address.map { [$0] } ?? [])).joined(separator: " ")
            FileHandle.standardOutput.write(Data((text + "\n").utf8))
            return
        }
        var output = Logger(label: logger.label) { label in
            JSONLogHandler(label: label) { FileHandle.standardOutput.write(Data($0.utf8)) }
        }
        output.logLevel = .notice
        output.notice("\(message)", metadata: metadata)
    }
}
