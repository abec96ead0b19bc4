import Crypto
public import NIOCore
import Foundation
import Logging
import Tracing
import WebImage

/// The proxy's request handling, apart from the wire: path → signature → options → result
/// cache → (fetch → process → store) → response with HTTP caching headers. ``ImageServer`` puts
/// it behind Hummingbird; it owns no image logic of its own.
public final class ImageProxy: Sendable {
    let configuration: ImageServerConfiguration
    let parser: OptionsParser
    /// How paths are read beyond the URL format: source rewriting, file names, only presets.
    let pathRules: ProxyPath.Rules
    let signer: URLSigner?
    /// The results the fleet shares, when configured.
    private let bucket: ResultBucket?
    let fetcher: SourceFetcher
    let results: DiskCache
    /// The results served most recently, in front of the disk: a hit costs no file read. Nil
    /// when configured to keep none.
    let recentResults: MemoryCache<ProcessedResult>?
    /// Paths already answered, by their raw text: a repeated path skips parsing, the signature
    /// check and the options, which were most of a memory hit's own work. Kept with the memory
    /// tier, in an eighth of its size.
    private let resolvedPaths: MemoryCache<ResolvedPath>?
    /// The SHA-256 of sources served from the source cache, by the cache entry they came from:
    /// every result of a cached source is validated by its digest (``etag(digest:describing:)``),
    /// which for a 512 KB photo was 4% of a request's time when hashed again each time.
    private let sourceDigests = MemoryCache<[UInt8]>(configuration: MemoryCacheConfiguration(costLimit: 1 << 20))
    let processor: ImageProcessor
    let gate: AdmissionGate
    let metrics: ServerMetrics
    /// The playground's demo images, the only `local:///` sources; nil without the playground.
    private let localSources: DemoSources?
    /// `local:///` sources under the configured root.
    private let localFiles: LocalFileSource?
    private let inFlight = InFlight<ProcessedResult>()
    /// Sources this node has downloaded, by URL (the last 65,536): a second download of one is
    /// counted and logged (``ServerMetrics/sourceRefetches``), so that a repeated fetch shows.
    private let downloadedSources = MemoryCache<Bool>(configuration: MemoryCacheConfiguration(countLimit: 65_536))
    /// Result-bucket lookups under way: a cold node's concurrent first requests for one result
    /// make one GET.
    private let bucketLookups = InFlight<ProcessedResult?>()
    private let logger: Logger
    /// Where a request's stage spans go (result cache, fetch, process with its decode, transforms
    /// and encode, store); nil makes none.
    let tracer: (any Tracer)?

    /// A processed result, as stored and served.
    struct ProcessedResult: Sendable {
        var data: Data
        var contentType: String
        var etag: String
        var lastModified: String?
        var fetchSeconds: Double?
        var processSeconds: Double?
        /// `IMGPROXY_ENABLE_DEBUG_HEADERS`' facts, kept with the result when the setting is on.
        var debug: DebugFacts?
        /// Where this answer came from.
        var tier: CacheTier = .processed
    }

    /// The source's byte count and size and the result's size, answered as imgproxy's debug
    /// headers (`handlers/processing/request_methods.go`, `writeDebugHeaders`), and stored with
    /// the result as five numbers so that a cached answer has them too.
    struct DebugFacts: Sendable, Equatable {
        var originBytes: Int
        var originWidth: Int
        var originHeight: Int
        var resultWidth: Int
        var resultHeight: Int

        /// From the source's and the result's bytes (their headers only); nil when either does not parse.
        init?(source: Data, result: Data) {
            guard let origin = try? ImageHeader(data: source), let made = try? ImageHeader(data: result) else { return nil }
            (originBytes, originWidth, originHeight) = (source.count, origin.width, origin.height)
            (resultWidth, resultHeight) = (made.width, made.height)
        }

        /// As stored in the result's metadata.
        init?(stored: Data?) {
            let numbers = stored.map { String(decoding: $0, as: UTF8.self).split(separator: " ").compactMap { Int($0) } } ?? []
            guard numbers.count == 5 else { return nil }
            (originBytes, originWidth, originHeight, resultWidth, resultHeight) = (
                numbers[0], numbers[1], numbers[2], numbers[3], numbers[4]
            )
        }

        var stored: Data { Data("\(originBytes) \(originWidth) \(originHeight) \(resultWidth) \(resultHeight)".utf8) }

        var headers: [(name: String, value: String)] {
            [
                ("X-Origin-Width", String(originWidth)), ("X-Origin-Height", String(originHeight)), ("X-Result-Width", String(resultWidth)),
                ("X-Result-Height", String(resultHeight)), ("X-Origin-Content-Length", String(originBytes)),
            ]
        }
    }

    /// What a valid path resolved to. Only paths whose answer does not depend on the request's
    /// headers (no `Vary`) or on the time (no `expires`) are kept.
    struct ResolvedPath: Sendable {
        var key: String
        var options: ProcessingOptions
    }

    /// The output format a request gets: named in the URL, negotiated from `Accept`, or the
    /// source's own.
    init(configuration: ImageServerConfiguration, telemetry: Telemetry, metrics: ServerMetrics, localSources: DemoSources? = nil)
        throws(WebImageError)
    {
        guard !configuration.signingKeys.isEmpty || configuration.allowsUnsigned else {
            throw WebImageError(.invalidArgument, "give a signing key (--key and --salt) or allow unsigned URLs (--allow-unsigned)")
        }
        self.configuration = configuration
        self.localSources = localSources
        tracer = telemetry.activeTracer
        localFiles = try configuration.localFilesystemRoot.map { root throws(WebImageError) in
            try LocalFileSource(root: root, maximumBytes: configuration.maximumSourceBytes)
        }
        let parser = OptionsParser(configuration: configuration)
        do throws(ProxyError) { try parser.validatePresets() } catch { throw WebImageError(.invalidArgument, error.reason) }
        self.parser = parser
        var rules = ProxyPath.Rules(
            rewriting: configuration.sourceRewriting, base64IncludesFilename: configuration.base64URLIncludesFilename,
            onlyPresets: configuration.onlyPresets, argumentsSeparator: configuration.argumentsSeparator)
        rules.allowsS3 = configuration.s3Sources != nil
        rules.allowsGCS = configuration.gcsSources != nil
        rules.querySeparator = configuration.sourceURLQuerySeparator
        pathRules = rules
        guard !configuration.preferredFormats.isEmpty else { throw WebImageError(.invalidArgument, "the preferred formats are empty") }
        if let unwritable = configuration.preferredFormats.first(where: { !parser.encodableFormats.contains($0) }) {
            throw WebImageError(.invalidArgument, "a preferred format must be one this server writes, not \(unwritable.rawValue)")
        }
        signer =
            configuration.signingKeys.isEmpty ? nil : URLSigner(keys: configuration.signingKeys, signatureSize: configuration.signatureSize)
        results = try DiskCache(
            directory: configuration.resolvedCacheDirectory.appendingPathComponent("results"),
            configuration: DiskCacheConfiguration(sizeLimit: configuration.resultCacheBytes), telemetry: telemetry)
        try Self.requireWritable(results)
        fetcher = try SourceFetcher(configuration: configuration, telemetry: telemetry)
        bucket = configuration.resultBucket.map { settings in
            // A lookup comes before every miss's work: a bucket that hangs may hold a request
            // no longer than a source download may, and is not tried again.
            var settings = settings
            settings.client.timeout = min(settings.client.timeout, configuration.downloadTimeout)
            settings.client.maximumAttempts = 1
            return ResultBucket(settings: settings, metrics: metrics, logger: telemetry.logger("server"))
        }
        // A memory cache's cost limit of 0 means unlimited; the server's 0 means none.
        let memoryBytes = configuration.resultMemoryCacheBytes
        recentResults =
            memoryBytes > 0 ? MemoryCache(configuration: MemoryCacheConfiguration(costLimit: memoryBytes), telemetry: telemetry) : nil
        resolvedPaths =
            memoryBytes > 0
            ? MemoryCache(configuration: MemoryCacheConfiguration(costLimit: max(memoryBytes / 8, 1)), telemetry: telemetry) : nil
        processor = ImageProcessor(
            coders: CodersManager.shared, maximumSourcePixels: Int(configuration.maximumSourceMegapixels * 1_000_000),
            maximumAnimationFrames: configuration.maximumAnimationFrames,
            maximumAnimationFramePixels: Int(configuration.maximumAnimationFrameMegapixels * 1_000_000),
            defaultQuality: configuration.defaultQuality,
            resultLimits: ProcessingPlan.Limits(
                maximumDimension: configuration.maximumResultDimension,
                maximumPixels: Int(configuration.maximumResultMegapixels * 1_000_000)),
            formatQuality: configuration.formatQuality, encoderSettings: configuration.encoding)
        gate = AdmissionGate(concurrency: configuration.concurrency, queueLength: configuration.queueLength)
        self.metrics = metrics
        logger = telemetry.logger("server")
    }

    /// Refuses a cache directory this process cannot write. A second node opening a directory
    /// another process holds would get a read-only cache (the disk cache's lock) and silently
    /// process every miss again without storing it; nodes on one host each keep their own
    /// directory (docs/deploy.md), so saying so at start-up is the useful answer.
    private static func requireWritable(_ results: DiskCache) throws(WebImageError) {
        guard results.isReadOnly else { return }
        results.close()
        throw WebImageError(
            .cacheIO,
            "the cache directory \(results.directory.deletingLastPathComponent().path) is in use by another process or not writable: "
                + "give each server its own --result-cache-dir")
    }

    /// Pieces of work (a download and its processing) running now for one or more requests.
    var inFlightCount: Int { inFlight.count }
    /// Requests waiting for that work.
    var inFlightWaiterCount: Int { inFlight.waiterCount }
    /// Requests waiting for a result-bucket lookup.
    var bucketLookupWaiterCount: Int { bucketLookups.waiterCount }

    /// Flushes and closes the caches and shuts the downloader down; ``run()`` does it when a
    /// service group stops. The proxy answers nothing afterwards.
    public func shutdown() async {
        await fetcher.shutdown()
        await bucket?.shutdown()
        try? results.flush()
        results.close()
    }

    /// The answer to a `GET` or `HEAD` of a proxy path. `connectionClosed`, the client's
    /// connection's close future, cancels a miss's work when the client goes away first.
    public func respond(
        method: String, path: Substring, accept: String?, ifNoneMatch: String?, ifModifiedSince: String? = nil,
        hints: OptionsParser.ClientHints? = nil, connectionClosed: EventLoopFuture<Void>? = nil
    ) async -> ProxyResponse {
        let start = ContinuousClock.now
        var response: ProxyResponse
        // Each validator only when the server sends it: an ETag never sent cannot be matched.
        let conditions = Conditions(
            ifNoneMatch: configuration.usesETag ? ifNoneMatch : nil,
            ifModifiedSince: configuration.usesLastModified ? ifModifiedSince : nil)
        do throws(ProxyError) {
            response = try await process(
                path: path, accept: accept, conditions: conditions, hints: configuration.enableClientHints ? hints : nil,
                closed: connectionClosed)
        } catch {
            response = errorResponse(error)
        }
        return counted(response, method: method, path: path, since: start)
    }

    /// Counts an answer to a proxy path in the request metrics and on the status board (every
    /// one: processing, `/info/`, and the refusals before either), and returns it.
    func counted(_ response: ProxyResponse, method: String, path: Substring, since start: ContinuousClock.Instant) -> ProxyResponse {
        // A HEAD's body is dropped by whoever routes it; only a GET's goes out.
        if method != "HEAD" { metrics.bytesOut.increment(by: Int64(response.body.count)) }
        metrics.record(
            status: response.status, seconds: Self.seconds(since: start), signedPath: Self.withoutSignature(path),
            bytes: response.body.count)
        return response
    }

    /// The answer to a `GET` or `HEAD` of `/info/SIGNATURE/OPTIONS/SOURCE` (imgproxy Pro's info
    /// endpoint, `path` without `/info`): the source's facts as JSON, signed like a processing
    /// URL, kept in the result cache under a key of its own.
    public func respondInfo(
        path: Substring, ifNoneMatch: String?, method: String = "GET", connectionClosed: EventLoopFuture<Void>? = nil
    ) async -> ProxyResponse {
        let start = ContinuousClock.now
        let response = await info(path: path, ifNoneMatch: ifNoneMatch, connectionClosed: connectionClosed)
        return counted(response, method: method, path: path, since: start)
    }

    private func info(path: Substring, ifNoneMatch: String?, connectionClosed: EventLoopFuture<Void>?) async -> ProxyResponse {
        do throws(ProxyError) {
            let proxyPath = try ProxyPath(parsing: path, rules: pathRules)
            try checkSignature(proxyPath)
            let options = try parser.parseInfo(proxyPath.options)
            let source = try judged(proxyPath.source)
            let key = ["info", source.absoluteString, options.canonical].joined(separator: "\n")
            let result: ProcessedResult
            if let hit = lookUp(key) {
                result = hit
            } else {
                result = try await describe(source, options: options, key: key, closed: connectionClosed)
            }
            let etag = presented(etag: result.etag)
            var headers: [(name: String, value: String)] = [
                ("Cache-Control", "public, max-age=\(Self.maximumAge(ttl: configuration.resultTTL, expires: options.expires))")
            ]
            if configuration.usesETag { headers.append(("ETag", etag)) }
            if let ifNoneMatch, configuration.usesETag, Self.matches(ifNoneMatch, etag) {
                return ProxyResponse(status: 304, headers: headers, tier: result.tier)
            }
            headers += [("Content-Type", result.contentType), ("Content-Length", String(result.data.count))]
            return ProxyResponse(status: 200, headers: headers, body: result.data, tier: result.tier)
        } catch {
            return errorResponse(error)
        }
    }

    /// The info of a source not cached: fetched, worked out in the work pool, stored.
    private func describe(_ source: URL, options: InfoOptions, key: String, closed: EventLoopFuture<Void>?) async throws(ProxyError)
        -> ProcessedResult
    {
        let fetched = try await fetchWithinDeadline(source, closed: closed)
        var limits = ProcessingOptions()
        limits.security = options.security
        try Self.checkSourceBytes(fetched.data, options: limits)
        let describer = ImageInfo(options: options, maximumSourcePixels: processor.maximumSourcePixels, coders: processor.coders)
        let data = fetched.data
        let json = try await withStageSpan("process", tracer: tracer) { () async throws(ProxyError) in
            try await gate.run(
                in: WorkPool.shared, limit: configuration.processingTimeout,
                timeout: ProxyError(status: 504, "processing took longer than \(configuration.processingTimeout)")
            ) { _ throws(ProxyError) in try describer.json(for: data) }
        }
        let result = ProcessedResult(
            data: Data(json.utf8), contentType: "application/json",
            etag: Self.etag(digest: digest(of: fetched), describing: "info\n\(options.canonical)"))
        keepLocally(result, for: key)
        return result
    }

    /// The path after its first segment (the signature), which `/status` may show.
    static func withoutSignature(_ path: Substring) -> Substring {
        let afterSlash = path.dropFirst()
        guard let end = afterSlash.firstIndex(of: "/") else { return path }
        return afterSlash[end...]
    }

    /// A request's conditional headers, as far as the server answers them.
    struct Conditions {
        var ifNoneMatch: String?
        var ifModifiedSince: String?
    }

    private func process(
        path: Substring, accept: String?, conditions: Conditions, hints: OptionsParser.ClientHints?, closed: EventLoopFuture<Void>?
    ) async throws(ProxyError)
        -> ProxyResponse
    {
        let pathKey = CacheKey(String(path))
        if let resolved = resolvedPaths?.value(for: pathKey), let hit = lookUp(resolved.key) {
            metrics.resolvedPathHits.increment()
            var response = success(hit, options: resolved.options, vary: false, conditions: conditions, timing: "cache;desc=\"result\"")
            // The key's first line is the source.
            let source = String(resolved.key.prefix { $0 != "\n" })
            response.headers +=
                canonicalHeader(source) + Self.dispositionHeader(of: response, source: source, options: resolved.options)
            return response
        }
        var proxyPath = try ProxyPath(parsing: path, rules: pathRules)
        try checkSignature(proxyPath)
        let options = try parser.parse(proxyPath.options, extensionName: proxyPath.extensionName, hints: hints)
        proxyPath.source = try judged(proxyPath.source)
        let parsed = proxyPath
        var response = try await answer(
            parsed, path: path, pathKey: pathKey, options: options, accept: accept, conditions: conditions, closed: closed)
        response.headers +=
            canonicalHeader(parsed.source.absoluteString)
            + Self.dispositionHeader(of: response, source: parsed.source.absoluteString, options: options)
        return response
    }

    /// `Content-Disposition` for an answer with an image in it (``ContentDisposition``); none
    /// for a 304 or an error.
    private static func dispositionHeader(of response: ProxyResponse, source: String, options: ProcessingOptions)
        -> [(name: String, value: String)]
    {
        guard !response.body.isEmpty, let type = response.headers.last(where: { $0.name == "Content-Type" })?.value,
            let format = ImageFormat.allCases.first(where: { $0.mimeType == type })
        else { return [] }
        let value = ContentDisposition.value(
            source: source, filename: options.filename, format: format, attachment: options.returnAttachment)
        return [("Content-Disposition", value)]
    }

    /// The URL to fetch for `source`: an http(s) source as the allow-list normalises it; a
    /// `local:///` one as it is, once the allow-list's `local://` entries allow it (the playground's
    /// demo images are not judged).
    private func judged(_ source: URL) throws(ProxyError) -> URL {
        if source.scheme != ProxyPath.localScheme { return try fetcher.allowedSource(source) }
        if localSources == nil { try fetcher.checkLocalSource(source) }
        return source
    }

    /// imgproxy's `Link: <SOURCE>; rel="canonical"` when configured, for http(s) sources. The
    /// source's text is asked for only then: a memory hit pays nothing when it is off.
    private func canonicalHeader(_ source: @autoclosure () -> String) -> [(name: String, value: String)] {
        guard configuration.setsCanonicalHeader else { return [] }
        let text = source()
        guard text.hasPrefix("http://") || text.hasPrefix("https://") else { return [] }
        return [("Link", "<\(text)>; rel=\"canonical\"")]
    }

    /// The answer for a parsed, signed path whose options are read: raw, a cached result, or a
    /// miss processed (or the fallback image).
    private func answer(
        _ parsed: ProxyPath, path: Substring, pathKey: CacheKey, options: ProcessingOptions, accept: String?, conditions: Conditions,
        closed: EventLoopFuture<Void>?
    ) async throws(ProxyError) -> ProxyResponse {
        if options.raw { return try await raw(parsed.source, options: options, closed: closed) }
        let choice = formatChoice(options: options, accept: accept)
        let key = [parsed.source.absoluteString, options.canonical, choice.key].joined(separator: "\n")
        let varyHeaders = self.varyHeaders(options)
        let vary = !varyHeaders.isEmpty
        if !vary, options.expires == nil {
            _ = resolvedPaths?.insert(ResolvedPath(key: key, options: options), for: pathKey, cost: path.utf8.count + key.utf8.count + 256)
        }

        if let hit = lookUp(key) {
            return success(hit, options: options, vary: vary, conditions: conditions, timing: "cache;desc=\"result\"")
        }
        if let bucket, let hit = try await fromBucket(bucket, key: key) {
            return success(hit, options: options, vary: vary, conditions: conditions, timing: "cache;desc=\"bucket\"")
        }
        metrics.resultMisses.increment()
        // The deadline covers everything from here: the download, the wait for a processing slot
        // and the processing. Past it, or once the client has gone, this request stops waiting;
        // the work it shares with others goes on for them, and is cancelled if none is left.
        let result: ProcessedResult
        do {
            result = try await processMiss(parsed, options: options, choice: choice, key: key, conditions: conditions, closed: closed)
        } catch  where error.sourceFailure != nil && configuration.fallbackImage != nil {
            return try await fallback(for: error, options: options, choice: choice, vary: vary)
        }
        var timing: [String] = []
        if let fetch = result.fetchSeconds { timing.append("fetch;dur=\(Self.milliseconds(fetch))") }
        if let process = result.processSeconds { timing.append("process;dur=\(Self.milliseconds(process))") }
        return success(result, options: options, vary: vary, conditions: conditions, timing: timing.joined(separator: ", "))
    }

    /// The result kept in the bucket, looked up once however many requests want it at once, and
    /// kept on this node too, so that the next request for it stays local.
    private func fromBucket(_ bucket: ResultBucket, key: String) async throws(ProxyError) -> ProcessedResult? {
        try await bucketLookups.run(key) { () async throws(ProxyError) -> ProcessedResult? in
            guard let hit = try await bucket.result(for: key) else { return nil }
            self.keepLocally(hit, for: key)
            return hit
        }
    }

    /// A result not cached: fetched, processed and stored, once however many requests want it.
    private func processMiss(
        _ parsed: ProxyPath, options: ProcessingOptions, choice: OutputFormatRule, key: String, conditions: Conditions,
        closed: EventLoopFuture<Void>?
    ) async throws(ProxyError) -> ProcessedResult {
        try await withDeadline(
            configuration.requestTimeout, error: ProxyError(status: 504, "the request took longer than \(configuration.requestTimeout)"),
            closed: closed
        ) { () async throws(ProxyError) -> ProcessedResult in
            // A revalidation of a result no longer cached: the source alone decides, and a
            // changed source is processed from the bytes already fetched.
            var fetched: FetchedSource?
            if let ifNoneMatch = conditions.ifNoneMatch {
                var source = try await self.fetch(parsed.source)
                source.digest = self.digest(of: source)
                let etag = self.etag(source: source, options: options, choice: choice)
                if Self.matches(ifNoneMatch, self.presented(etag: etag)) {
                    return ProcessedResult(data: Data(), contentType: "", etag: etag, tier: .revalidated)
                }
                fetched = source
            }
            return try await self.inFlight.run(key) { [fetched] () async throws(ProxyError) -> ProcessedResult in
                let source: FetchedSource
                if let fetched { source = fetched } else { source = try await self.fetch(parsed.source) }
                return try await self.produce(source, from: parsed.source, options: options, choice: choice, key: key)
            }
        }
    }

    /// The source's bytes, within the request timeout and for as long as the client stays.
    private func fetchWithinDeadline(_ source: URL, closed: EventLoopFuture<Void>?) async throws(ProxyError) -> FetchedSource {
        try await withDeadline(
            configuration.requestTimeout, error: ProxyError(status: 504, "the request took longer than \(configuration.requestTimeout)"),
            closed: closed
        ) { () async throws(ProxyError) -> FetchedSource in try await self.fetch(source) }
    }

    /// `raw`: the source's bytes as fetched (through the source cache and its byte cap), not
    /// processed and not stored as a result, typed by what they are.
    private func raw(_ source: URL, options: ProcessingOptions, closed: EventLoopFuture<Void>?) async throws(ProxyError) -> ProxyResponse {
        let fetched = try await fetchWithinDeadline(source, closed: closed)
        try Self.checkSourceBytes(fetched.data, options: options)
        // Whatever the source: an http source's bytes were sniffed by the downloader already, a
        // local file's were not, and `raw` answers only images, as `/info` and processing do.
        guard let format = fetched.data.withUnsafeBytes({ ImageFormat(sniffing: $0) }) else {
            throw .unsupported("the source is not an image")
        }
        let contentType = format.mimeType
        return ProxyResponse(
            status: 200,
            headers: [
                ("Cache-Control", "public, max-age=\(Self.maximumAge(ttl: configuration.resultTTL, expires: options.expires))"),
                ("Content-Type", contentType), ("Content-Length", String(fetched.data.count)),
            ] + Self.activeContentHeaders(contentType), body: fetched.data, tier: .raw)
    }

    /// The fallback image, processed with the request's options, for a source that could not be
    /// fetched (imgproxy's `handleDownloadError`): its own status and lifetime, no validators,
    /// never stored as the source's result.
    private func fallback(for error: ProxyError, options: ProcessingOptions, choice: OutputFormatRule, vary: Bool)
        async throws(ProxyError) -> ProxyResponse
    {
        let sourceError = error
        guard let fallback = configuration.fallbackImage else { throw sourceError }
        logger.notice("a source could not be fetched: answering the fallback image", metadata: ["reason": "\(sourceError.reason)"])
        let bytes: Data
        switch fallback.source {
        case .data(let data): bytes = data
        case .url(let url):
            // The client is told of its source's failure, not of the fallback's own.
            do throws(ProxyError) {
                bytes = try await fetch(url).data
            } catch {
                logger.warning("the fallback image could not be fetched", metadata: ["reason": "\(error.reason)"])
                throw sourceError
            }
        }
        let (encoded, format) = try await render(bytes, options: options, choice: choice)
        var headers: [(name: String, value: String)] =
            [
                (
                    "Cache-Control",
                    "public, max-age=\(fallback.ttl ?? Self.maximumAge(ttl: configuration.resultTTL, expires: options.expires))"
                ),
                ("Content-Type", format.mimeType), ("Content-Length", String(encoded.count)),
            ] + Self.activeContentHeaders(format.mimeType)
        if vary { headers.append(("Vary", varyHeaders(options).joined(separator: ", "))) }
        return ProxyResponse(
            status: fallback.status == 0 ? error.status.code : fallback.status, headers: headers, body: encoded, tier: .fallback)
    }

    private func checkSignature(_ path: ProxyPath) throws(ProxyError) {
        if let signer, signer.isValid(path.signature, for: path.signedPath) { return }
        if configuration.trustedSignatures.contains(String(path.signature)) { return }
        guard configuration.allowsUnsigned else {
            throw .forbidden(signer == nil ? "unsigned URLs are not allowed" : "invalid signature")
        }
        // imgproxy's VerifySignature without keys: a first segment with a `:` is an option
        // where the signature (any text, such as `unsafe`) was left out.
        if path.signature.contains(":") {
            throw .forbidden("the signature appears to be a processing option: the signature section must always be in the URL")
        }
    }

    /// The rule the result's format follows: the URL's format, and the formats the client
    /// accepts that the server chooses (`auto`) or enforces, best first.
    private func formatChoice(options: ProcessingOptions, accept: String?) -> OutputFormatRule {
        var rule = OutputFormatRule(requested: options.format, sourceFormats: configuration.preferredFormats)
        rule.best = options.bestFormat
        let accepted = AcceptHeader(accept)
        let switches: [(ImageFormat, auto: Bool, enforce: Bool)] = [
            (.jpegXL, configuration.autoJXL, configuration.enforceJXL), (.avif, configuration.autoAVIF, configuration.enforceAVIF),
            (.webP, configuration.autoWebP, configuration.enforceWebP),
        ]
        for (format, auto, enforce) in switches where (auto || enforce) && parser.encodableFormats.contains(format) {
            guard accepted.names(format.mimeType) else { continue }
            rule.preferred.append(format)
            if enforce { rule.enforced.append(format) }
        }
        return rule
    }

    /// The stored result for `key`, if the result cache has it whole, as a span when traced.
    private func lookUp(_ key: String) -> ProcessedResult? {
        StageSpans(tracer: tracer).measure("result cache") { cachedResult(for: key) }
    }

    /// The stored result for `key`, if the result cache has it whole.
    private func cachedResult(for key: String) -> ProcessedResult? {
        if var recent = recentResults?.value(for: CacheKey(key)) {
            metrics.resultMemoryHits.increment()
            recent.tier = .memory
            return recent
        }
        guard let metadata = results.metadata(for: key), let etag = metadata.etag, let contentType = metadata.contentType,
            let data = try? results.data(for: key)
        else { return nil }
        let result = ProcessedResult(
            data: data, contentType: contentType, etag: etag, lastModified: metadata.lastModified,
            debug: DebugFacts(stored: metadata.extendedData), tier: .disk)
        remember(result, for: key)
        metrics.resultHits.increment()
        return result
    }

    /// Keeps a result in memory too, without the timings of the request that made it.
    private func remember(_ result: ProcessedResult, for key: String) {
        let stored = ProcessedResult(
            data: result.data, contentType: result.contentType, etag: result.etag, lastModified: result.lastModified, debug: result.debug)
        _ = recentResults?.insert(stored, for: CacheKey(key), cost: result.data.count)
    }

    /// A source's bytes and how they were got.
    struct FetchedSource: Sendable {
        var data: Data
        var seconds: Double
        /// The source's `Last-Modified`, when its origin sent one (imgproxy's
        /// `IMGPROXY_USE_LAST_MODIFIED` passes it on).
        var lastModified: String?
        /// For bytes served from the source cache with the origin's validators, the entry they
        /// are: its URL, validators, expiry and length.
        var cacheEntry: CacheKey?
        /// The bytes' SHA-256, once a step that needed it has it (a revalidation that goes on
        /// to process the same bytes).
        var digest: [UInt8]?
    }

    /// The SHA-256 of a source's bytes, remembered for a source cache entry.
    private func digest(of source: FetchedSource) -> [UInt8] {
        if let known = source.digest { return known }
        if let entry = source.cacheEntry, let known = sourceDigests.value(for: entry) { return known }
        let digest = Array(SHA256.hash(data: source.data))
        if let entry = source.cacheEntry { sourceDigests.insert(digest, for: entry, cost: digest.count + entry.original.utf8.count) }
        return digest
    }

    /// The source's bytes, timed and counted, as a span when traced.
    private func fetch(_ source: URL) async throws(ProxyError) -> FetchedSource {
        try await withStageSpan("fetch", tracer: tracer) { () async throws(ProxyError) in try await fetchSource(source) }
    }

    private func fetchSource(_ source: URL) async throws(ProxyError) -> FetchedSource {
        let start = ContinuousClock.now
        if source.scheme == ProxyPath.localScheme {
            if let local = localSources?.source(path: source.path) {
                return FetchedSource(data: local.data, seconds: Self.seconds(since: start))
            }
            guard let localFiles else {
                throw .notFound("no local source \(source.path) (without --local-filesystem-root only the playground's images are local)")
            }
            return FetchedSource(data: try await localFiles.load(source.path), seconds: Self.seconds(since: start))
        }
        let fetched: ImageData
        do throws(ProxyError) {
            fetched = try await fetcher.fetch(source)
        } catch {
            // A fetch every request waiting for it left (their deadlines passed, their clients
            // went) is cancelled, though the origin was asked: counted, so that the next request's
            // fetch of the same source is seen for what it is.
            if let kind = error.sourceFailure ?? (error.status.code == 499 ? "cancelled" : nil) { metrics.countSourceError(kind: kind) }
            throw error
        }
        let seconds = Self.seconds(since: start)
        if fetched.cacheType != .none {
            metrics.sourceHits.increment()
        } else {
            metrics.bytesIn.increment(by: Int64(fetched.data.count))
            noteDownload(of: source)
        }
        metrics.fetchDuration.recordSeconds(seconds)
        var source = FetchedSource(data: fetched.data, seconds: seconds, lastModified: fetched.metadata.lastModified)
        // Remembered only for bytes from the source cache whose origin validated them (a strong
        // ETag or a Last-Modified): an entry stored again with other bytes differs in those, or
        // at the least in its expiry.
        let metadata = fetched.metadata
        let strongETag = metadata.etag.map { !$0.hasPrefix("W/") } ?? false
        if fetched.cacheType != .none, strongETag || metadata.lastModified != nil {
            let expiry = metadata.expires.map { String($0.timeIntervalSince1970) } ?? "-"
            source.cacheEntry = CacheKey(
                [fetched.url.absoluteString, metadata.etag ?? "-", metadata.lastModified ?? "-", expiry, String(fetched.data.count)]
                    .joined(separator: "\n"))
        }
        return source
    }

    /// Counts and logs a download of a source this node downloaded before.
    private func noteDownload(of source: URL) {
        let key = CacheKey(source.absoluteString)
        guard downloadedSources.value(for: key) != nil else {
            downloadedSources.insert(true, for: key, cost: 1)
            return
        }
        metrics.sourceRefetches.increment()
        // The origin only, as /status shows sources: the path and query may hold tokens.
        logger.notice(
            "a source was fetched again",
            metadata: ["source": "\(source.scheme ?? "?")://\(source.host ?? "?")\(source.port.map { ":\($0)" } ?? "")/…"])
    }

    /// Processes a fetched source in the work pool, stores and returns the result.
    private func produce(_ fetched: FetchedSource, from source: URL, options: ProcessingOptions, choice: OutputFormatRule, key: String)
        async throws(ProxyError) -> ProcessedResult
    {
        let data = fetched.data
        try Self.checkSourceBytes(data, options: options)
        try Self.checkHashsum(data, options: options)
        let processStart = ContinuousClock.now
        let (encoded, format) = try await render(data, options: options, choice: choice)
        let processSeconds = Self.seconds(since: processStart)
        metrics.processingDuration.recordSeconds(processSeconds)
        let result = ProcessedResult(
            data: encoded, contentType: format.mimeType, etag: etag(source: fetched, options: options, choice: choice),
            lastModified: fetched.lastModified,
            fetchSeconds: fetched.seconds, processSeconds: processSeconds,
            debug: configuration.enablesDebugHeaders ? DebugFacts(source: data, result: encoded) : nil)
        keepLocally(result, for: key)
        bucket?.store(result, for: key)
        return result
    }

    /// Writes a result to the disk tier (with its validators and debug facts beside it, as a
    /// span when traced) and keeps it in memory; a failed write is logged, not answered.
    private func keepLocally(_ result: ProcessedResult, for key: String) {
        remember(result, for: key)
        var metadata = DiskCacheMetadata(contentType: result.contentType, etag: result.etag, lastModified: result.lastModified)
        metadata.extendedData = result.debug?.stored
        do {
            try StageSpans(tracer: tracer).measure("store") { () throws(WebImageError) in
                try results.store(result.data, for: key, metadata: metadata)
            }
        } catch {
            logger.warning("the result cache could not store a result", metadata: ["error": "\(error)"])
        }
    }

    /// Refuses a source over the URL's own `max_src_file_size` (413, as a source over the server's
    /// byte cap); 0 is no limit of its own.
    private static func checkSourceBytes(_ data: Data, options: ProcessingOptions) throws(ProxyError) {
        if let limit = options.security.sourceBytes, limit > 0, data.count > limit {
            throw .tooLarge("the source is over the byte limit: \(data.count) bytes, over the URL's \(limit) (max_src_file_size)")
        }
    }

    /// Refuses a source whose digest is not the URL's `hashsum` (imgproxy's 422).
    static func checkHashsum(_ data: Data, options: ProcessingOptions) throws(ProxyError) {
        guard let hashsum = options.hashsum else { return }
        let digest: [UInt8]
        switch hashsum.kind {
        case .md5: digest = Array(Insecure.MD5.hash(data: data))
        case .sha1: digest = Array(Insecure.SHA1.hash(data: data))
        case .sha256: digest = Array(SHA256.hash(data: data))
        case .sha512: digest = Array(SHA512.hash(data: data))
        }
        guard digest.map({ String(format: "%02x", $0) }).joined() == hashsum.digest else {
            throw .unprocessable("the source's \(hashsum.kind.rawValue) is not the URL's (hashsum)")
        }
    }

    /// `data` processed in the work pool, within a slot of the admission gate.
    private func render(_ data: Data, options: ProcessingOptions, choice: OutputFormatRule) async throws(ProxyError)
        -> (data: Data, format: ImageFormat)
    {
        let processor = self.processor
        let watermark = try await watermark(for: options)
        let limit = configuration.processingTimeout
        // The span covers the wait for a slot too; its decode, transforms and encode are beneath it.
        let result = try await withStageSpan("process", tracer: tracer) { () async throws(ProxyError) in
            let spans = StageSpans(tracer: tracer)
            return try await gate.run(
                in: WorkPool.shared, limit: limit, timeout: ProxyError(status: 504, "processing took longer than \(limit)")
            ) { isCancelled throws(ProxyError) in
                try processor.process(data, options: options, rule: choice, watermark: watermark, spans: spans, isCancelled: isCancelled)
            }
        }
        metrics.running.record(gate.running)
        metrics.queued.record(gate.queued)
        return result
    }

    /// The configured watermark's bytes when `options` lay it: its data, or its URL fetched like
    /// a source (through the source cache).
    private func watermark(for options: ProcessingOptions) async throws(ProxyError) -> ImageProcessor.Watermark? {
        guard let placing = options.watermark, placing.opacity > 0 else { return nil }
        if let markup = placing.text {
            // `wmt`: the text drawn through the SVG coder, cut to its ink when laid.
            return ImageProcessor.Watermark(
                data: Data(try TextWatermark.svg(markup: markup).utf8), opacity: configuration.watermark?.opacity ?? 1, isText: true)
        }
        if let url = placing.url {
            // `wmu`: judged and fetched as a source is, through the source cache.
            let allowed = try fetcher.allowedSource(url)
            return ImageProcessor.Watermark(data: try await fetch(allowed).data, opacity: configuration.watermark?.opacity ?? 1)
        }
        guard let configured = configuration.watermark else { return nil }
        switch configured.source {
        case .data(let data): return ImageProcessor.Watermark(data: data, opacity: configured.opacity)
        case .url(let url): return ImageProcessor.Watermark(data: try await fetch(url).data, opacity: configured.opacity)
        }
    }

    /// A strong validator: the source's bytes (hashed), the canonical options and the format.
    private func etag(source: FetchedSource, options: ProcessingOptions, choice: OutputFormatRule) -> String {
        Self.etag(digest: digest(of: source), describing: "\(options.canonical)\n\(choice.key)")
    }

    /// A strong validator of an answer made from a source whose SHA-256 is `digest` as
    /// `description` says.
    static func etag(digest: [UInt8], describing description: String) -> String {
        var hash = SHA256()
        hash.update(data: Data(digest))
        hash.update(data: Data("\n\(description)".utf8))
        return "\"" + URLSigner.base64URL(Array(Array(hash.finalize()).prefix(18))) + "\""
    }

    /// The `max-age` of a result: the TTL, cut to what is left of the URL's `expires` so that no
    /// cache in front (the nginx tier, a CDN, a browser) serves an expired URL's image on.
    static func maximumAge(ttl: Int, expires: Int?, now: Date = Date()) -> Int {
        guard let expires else { return ttl }
        return max(0, min(ttl, expires - Int(now.timeIntervalSince1970.rounded(.up))))
    }

    /// Whether an `If-None-Match` list names `etag` (or is `*`); weak forms compare equal.
    static func matches(_ ifNoneMatch: String, _ etag: String) -> Bool {
        ifNoneMatch.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }

    private func success(_ result: ProcessedResult, options: ProcessingOptions, vary: Bool, conditions: Conditions, timing: String)
        -> ProxyResponse
    {
        let etag = presented(etag: result.etag)
        let lastModified = presented(lastModified: result.lastModified)
        var headers: [(name: String, value: String)] = [
            ("Cache-Control", "public, max-age=\(Self.maximumAge(ttl: configuration.resultTTL, expires: options.expires))")
        ]
        if configuration.usesETag { headers.append(("ETag", etag)) }
        if vary { headers.append(("Vary", varyHeaders(options).joined(separator: ", "))) }
        if let lastModified { headers.append(("Last-Modified", lastModified)) }
        if !timing.isEmpty { headers.append(("Server-Timing", timing)) }
        if configuration.enablesDebugHeaders, let debug = result.debug { headers += debug.headers }
        if Self.isNotModified(conditions, etag: etag, lastModified: lastModified) {
            return ProxyResponse(status: 304, headers: headers, tier: result.tier)
        }
        headers.append(("Content-Type", result.contentType))
        headers.append(("Content-Length", String(result.data.count)))
        headers += Self.activeContentHeaders(result.contentType)
        return ProxyResponse(status: 200, headers: headers, body: result.data, tier: result.tier)
    }

    /// The request headers an answer depends on: `Accept` when a format may be chosen by it, the
    /// client hints (imgproxy's list) when they are taken.
    private func varyHeaders(_ options: ProcessingOptions) -> [String] {
        var headers: [String] = []
        let negotiates = (configuration.autoWebP || configuration.autoAVIF || configuration.autoJXL) && options.format == nil
        if negotiates || configuration.enforceWebP || configuration.enforceAVIF || configuration.enforceJXL { headers.append("Accept") }
        // imgproxy's spelling (its httpheaders constants): a name is the same whatever its case.
        if configuration.enableClientHints { headers += ["Sec-Ch-Dpr", "Dpr", "Sec-Ch-Width", "Width"] }
        return headers
    }

    /// Whether a conditional request is answered 304 (RFC 9110 13.2.2): `If-None-Match` when
    /// there is one, else `If-Modified-Since` against the `Last-Modified` sent.
    static func isNotModified(_ conditions: Conditions, etag: String, lastModified: String?) -> Bool {
        if let ifNoneMatch = conditions.ifNoneMatch { return matches(ifNoneMatch, etag) }
        guard let since = conditions.ifModifiedSince.flatMap(HTTPDate.parse), let modified = lastModified.flatMap(HTTPDate.parse) else {
            return false
        }
        return modified <= since
    }

    /// The `ETag` sent: the stored one, or with a buster imgproxy's `"BUSTER/base64url(etag)"`.
    func presented(etag: String) -> String {
        guard !configuration.etagBuster.isEmpty else { return etag }
        return "\"\(configuration.etagBuster)/\(URLSigner.base64URL(Array(etag.utf8)))\""
    }

    /// The `Last-Modified` sent: none when off, the buster when the source's is older.
    func presented(lastModified: String?) -> String? {
        guard configuration.usesLastModified, let lastModified else { return nil }
        guard let buster = configuration.lastModifiedBuster, let date = HTTPDate.parse(lastModified), date < buster else {
            return lastModified
        }
        return HTTPDate.format(buster)
    }

    /// What an answer that a browser could run gets: an SVG (answered as SVG by `raw`, `skp:svg`
    /// or `--skip-processing-formats svg`, never made here) may hold scripts, event attributes
    /// and external references, which run when the URL is opened as a page. It is sent with a
    /// policy that lets it run and fetch nothing (inline styles aside) and in a sandbox, and as an
    /// attachment (``ContentDisposition``); as an `<img>` a browser runs none of
    /// it anyway. imgproxy sanitises the document instead (`IMGPROXY_SANITIZE_SVG`); these headers
    /// cover every way in without a second XML parser.
    static func activeContentHeaders(_ contentType: String) -> [(name: String, value: String)] {
        guard contentType == ImageFormat.svg.mimeType else { return [] }
        return [("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")]
    }

    func errorResponse(_ error: ProxyError) -> ProxyResponse {
        var headers: [(name: String, value: String)] = [("Content-Type", "text/plain; charset=utf-8")]
        let transient = [503, 504, 499].contains(error.status.code)
        headers.append(("Cache-Control", transient ? "no-store" : "public, max-age=\(configuration.errorTTL)"))
        if let retryAfter = error.retryAfter { headers.append(("Retry-After", String(retryAfter))) }
        if error.status.code >= 500 {
            logger.notice("request failed", metadata: ["status": "\(error.status.code)", "reason": "\(error.reason)"])
        }
        return ProxyResponse(status: error.status.code, headers: headers, body: Data((error.reason + "\n").utf8))
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    private static func milliseconds(_ seconds: Double) -> String {
        String(format: "%.1f", seconds * 1000)
    }
}
