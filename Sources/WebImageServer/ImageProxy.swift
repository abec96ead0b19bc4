public import NIOCore
import Foundation
import Logging
import Tracing
import WebImage

/// The proxy's request handling, apart from the wire. One request goes through its stages in
/// order, as imgproxy's `execute` does: read (the path, its signature and options, the source
/// judged) → the result store (memory, disk, the fleet's bucket) → on a miss, fetch and process
/// once however many requests want the result, then store → the response (validators, caching
/// headers). ``ImageServer`` puts it behind Hummingbird; it owns no image logic of its own.
public final class ImageProxy: Sendable {
    let configuration: ImageServerConfiguration
    let reader: RequestReader
    let store: ResultStore
    let fetcher: SourceFetcher
    let processing: ProcessingStage
    let responses: ResponseBuilder
    let metrics: ServerMetrics
    /// Misses being fetched and processed now, by result key, each for one or more requests.
    private let inFlight = InFlight<ProcessedResult>()
    private let logger: Logger
    /// Where a request's stage spans go (result cache, fetch, process with its decode, transforms
    /// and encode, store); nil makes none.
    let tracer: (any Tracer)?

    init(configuration: ImageServerConfiguration, telemetry: Telemetry, metrics: ServerMetrics, localSources: DemoSources? = nil)
        throws(WebImageError)
    {
        guard !configuration.signingKeys.isEmpty || configuration.allowsUnsigned else {
            throw WebImageError(.invalidArgument, "give a signing key (--key and --salt) or allow unsigned URLs (--allow-unsigned)")
        }
        self.configuration = configuration
        // Checked and opened in this order, so that a configuration refused, or a result cache
        // another process holds, fails before the source clients start.
        reader = try RequestReader(configuration: configuration)
        store = try ResultStore(configuration: configuration, telemetry: telemetry, metrics: metrics)
        fetcher = try SourceFetcher(configuration: configuration, telemetry: telemetry, metrics: metrics, demos: localSources)
        processing = ProcessingStage(configuration: configuration, telemetry: telemetry, metrics: metrics)
        responses = ResponseBuilder(configuration: configuration)
        self.metrics = metrics
        logger = telemetry.logger("server")
        tracer = telemetry.activeTracer
    }

    /// The options parser the server reads paths with.
    var parser: OptionsParser { reader.parser }
    /// The admission gate processing waits in.
    var gate: AdmissionGate { processing.gate }
    /// Pieces of work (a download and its processing) running now for one or more requests.
    var inFlightCount: Int { inFlight.count }
    /// Requests waiting for that work.
    var inFlightWaiterCount: Int { inFlight.waiterCount }
    /// Requests waiting for a result-bucket lookup.
    var bucketLookupWaiterCount: Int { store.bucketLookupWaiterCount }

    /// Flushes and closes the caches and shuts the downloader down; ``run()`` does it when a
    /// service group stops. The proxy answers nothing afterwards.
    public func shutdown() async {
        await fetcher.shutdown()
        await store.shutdown()
    }

    /// The answer to a `GET` or `HEAD` of a proxy path. `connectionClosed`, the client's
    /// connection's close future, cancels a miss's work when the client goes away first.
    package func respond(
        method: String, path: Substring, accept: String?, ifNoneMatch: String?, ifModifiedSince: String? = nil,
        hints: OptionsParser.ClientHints? = nil, connectionClosed: EventLoopFuture<Void>? = nil
    ) async -> ProxyResponse {
        let start = ContinuousClock.now
        let conditions = Conditions(ifNoneMatch: ifNoneMatch, ifModifiedSince: ifModifiedSince, answeredBy: configuration)
        var response: ProxyResponse
        do throws(ProxyError) {
            response = try await execute(path: path, accept: accept, conditions: conditions, hints: hints, closed: connectionClosed)
        } catch {
            response = errorResponse(error)
        }
        return counted(response, method: method, path: path, since: start)
    }

    /// One processing request, top to bottom.
    private func execute(
        path: Substring, accept: String?, conditions: Conditions, hints: OptionsParser.ClientHints?, closed: EventLoopFuture<Void>?
    ) async throws(ProxyError) -> ProxyResponse {
        let pathKey = CacheKey(String(path))
        // A path answered before, whose result is still here: nothing to read again.
        if let resolved = store.resolved(pathKey), let hit = store.local(resolved.key) {
            metrics.resolvedPathHits.increment()
            var response = responses.result(
                hit, options: resolved.options, vary: [], conditions: conditions, timing: "cache;desc=\"result\"")
            // The key's first line is the source.
            response.headers += responses.sourceHeaders(
                of: response, source: String(resolved.key.prefix { $0 != "\n" }), options: resolved.options)
            return response
        }
        let request = try reader.read(path: path, accept: accept, conditions: conditions, hints: hints, sources: fetcher)
        var response = try await answer(request, pathKey: pathKey, closed: closed)
        response.headers += responses.sourceHeaders(of: response, source: request.source.absoluteString, options: request.options)
        return response
    }

    /// The answer to a request read: the source as it is (`raw`), the stored result, or a miss
    /// made (or the fallback image, its source failing).
    private func answer(_ request: ProxyRequest, pathKey: CacheKey, closed: EventLoopFuture<Void>?) async throws(ProxyError)
        -> ProxyResponse
    {
        if request.options.raw { return try await raw(request, closed: closed) }
        store.remember(request, resolving: pathKey)
        if let hit = store.local(request.key) { return responses.result(hit, for: request, timing: "cache;desc=\"result\"") }
        if let hit = try await store.shared(request.key) { return responses.result(hit, for: request, timing: "cache;desc=\"bucket\"") }
        metrics.resultMisses.increment()
        let result: ProcessedResult
        do {
            result = try await miss(request, closed: closed)
        } catch {
            guard error.sourceFailure != nil, let fallback = configuration.fallbackImage else { throw error }
            return try await fallbackImage(fallback, for: request, replacing: error)
        }
        return responses.result(result, for: request, timing: result.serverTiming)
    }

    /// A result not stored: fetched, processed and stored, once however many requests want it.
    /// The deadline covers everything from here: the download, the wait for a processing slot
    /// and the processing. Past it, or once the client has gone, this request stops waiting; the
    /// work it shares with others goes on for them, and is cancelled if none is left.
    private func miss(_ request: ProxyRequest, closed: EventLoopFuture<Void>?) async throws(ProxyError) -> ProcessedResult {
        try await withinDeadline(closed: closed) { () async throws(ProxyError) -> ProcessedResult in
            // A revalidation of a result no longer stored: the source alone decides (imgproxy v4
            // passes the conditions on to it), and a changed source is processed from the bytes
            // already fetched.
            var fetched: FetchedSource?
            if let validators = request.conditions.forwarded {
                switch try await self.fetcher.fetch(request.source, asking: validators) {
                case .notModified(let etag, let lastModified):
                    return ProcessedResult(
                        data: Data(), contentType: "", etag: etag, lastModified: ProcessedResult.validDate(lastModified), tier: .revalidated
                    )
                case .fetched(let source):
                    fetched = source
                }
            }
            return try await self.inFlight.run(request.key) { [fetched] () async throws(ProxyError) -> ProcessedResult in
                let source: FetchedSource
                if let fetched { source = fetched } else { source = try await self.fetcher.fetch(request.source) }
                return try await self.produce(request, from: source)
            }
        }
    }

    /// A fetched source processed, stored and returned.
    private func produce(_ request: ProxyRequest, from source: FetchedSource) async throws(ProxyError) -> ProcessedResult {
        try ProcessingStage.checkSourceBytes(source.data, security: request.options.security)
        try ProcessingStage.checkHashsum(source.data, options: request.options)
        let watermark = try await fetcher.watermark(for: request.options)
        let made = try await processing.render(source.data, options: request.options, choice: request.choice, watermark: watermark)
        let result = ProcessedResult(
            data: made.data, contentType: made.format.mimeType, etag: source.etag,
            lastModified: ProcessedResult.validDate(source.lastModified),
            fetchSeconds: source.seconds, processSeconds: made.seconds,
            debug: configuration.enablesDebugHeaders ? DebugFacts(source: source.data, result: made.data) : nil)
        store.keep(result, for: request.key)
        return result
    }

    /// `raw`: the source's bytes as fetched (through the source cache and its byte cap), not
    /// processed and not stored as a result, typed by what they are.
    /// The request's conditions go to the source as they came and its validators come back as it
    /// sent them, as imgproxy's stream handler passes them (`handlers/stream`).
    private func raw(_ request: ProxyRequest, closed: EventLoopFuture<Void>?) async throws(ProxyError) -> ProxyResponse {
        let answer = try await withinDeadline(closed: closed) { () async throws(ProxyError) in
            try await self.fetcher.fetch(request.source, asking: request.conditions.passedThrough)
        }
        let fetched: FetchedSource
        switch answer {
        case .notModified(let etag, let lastModified):
            return responses.rawNotModified(etag: etag, lastModified: lastModified, options: request.options)
        case .fetched(let source): fetched = source
        }
        try ProcessingStage.checkSourceBytes(fetched.data, security: request.options.security)
        // Whatever the source: an http source's bytes were sniffed by the downloader already, a
        // local file's were not, and `raw` answers only images, as `/info` and processing do.
        guard let format = fetched.data.withUnsafeBytes({ ImageFormat(sniffing: $0) }) else {
            throw .unsupported("the source is not an image")
        }
        return responses.raw(fetched, format: format, options: request.options)
    }

    /// The fallback image, processed with the request's options, for a source that could not be
    /// fetched (imgproxy's `handleDownloadError`); never stored as the source's result.
    private func fallbackImage(_ fallback: FallbackImage, for request: ProxyRequest, replacing error: ProxyError)
        async throws(ProxyError) -> ProxyResponse
    {
        logger.notice("a source could not be fetched: answering the fallback image", metadata: ["reason": "\(error.reason)"])
        let bytes = try await fetcher.fallbackBytes(fallback, replacing: error)
        let watermark = try await fetcher.watermark(for: request.options)
        let made = try await processing.render(bytes, options: request.options, choice: request.choice, watermark: watermark)
        return responses.fallback(made.data, format: made.format, fallback: fallback, error: error, for: request)
    }

    /// The answer to a `GET` or `HEAD` of `/info/SIGNATURE/OPTIONS/SOURCE` (imgproxy Pro's info
    /// endpoint, `path` without `/info`): the source's facts as JSON, signed like a processing
    /// URL, kept in the result store under a key of its own.
    package func respondInfo(
        path: Substring, ifNoneMatch: String?, method: String = "GET", connectionClosed: EventLoopFuture<Void>? = nil
    ) async -> ProxyResponse {
        let start = ContinuousClock.now
        var response: ProxyResponse
        do throws(ProxyError) {
            let (source, options, key) = try reader.readInfo(path: path, sources: fetcher)
            let result: ProcessedResult
            if let hit = store.local(key) {
                result = hit
            } else {
                result = try await describe(source, options: options, key: key, closed: connectionClosed)
            }
            response = responses.info(result, options: options, ifNoneMatch: ifNoneMatch)
        } catch {
            response = errorResponse(error)
        }
        return counted(response, method: method, path: path, since: start)
    }

    /// The info of a source not stored: fetched, worked out in the work pool, stored.
    private func describe(_ source: URL, options: InfoOptions, key: String, closed: EventLoopFuture<Void>?) async throws(ProxyError)
        -> ProcessedResult
    {
        let fetched = try await withinDeadline(closed: closed) { () async throws(ProxyError) in try await self.fetcher.fetch(source) }
        try ProcessingStage.checkSourceBytes(fetched.data, security: options.security)
        let json = try await processing.describe(fetched.data, options: options)
        let result = ProcessedResult(data: Data(json.utf8), contentType: "application/json", etag: fetched.etag)
        store.keepLocally(result, for: key)
        return result
    }

    /// `work` within the request timeout and for as long as the client stays.
    private func withinDeadline<Value: Sendable>(
        closed: EventLoopFuture<Void>?, _ work: @escaping @Sendable () async throws(ProxyError) -> Value
    ) async throws(ProxyError) -> Value {
        let limit = configuration.requestTimeout
        return try await withDeadline(limit, error: ProxyError(status: 504, "the request took longer than \(limit)"), closed: closed, work)
    }

    /// Counts an answer to a proxy path in the request metrics and on the status board (every
    /// one: processing, `/info/`, and the refusals before either), and returns it.
    func counted(_ response: ProxyResponse, method: String, path: Substring, since start: ContinuousClock.Instant) -> ProxyResponse {
        // A HEAD's body is dropped by whoever routes it; only a GET's goes out.
        if method != "HEAD" { metrics.bytesOut.increment(by: Int64(response.body.count)) }
        metrics.record(
            status: response.status, seconds: ContinuousClock.now.seconds(since: start), signedPath: Self.withoutSignature(path),
            bytes: response.body.count)
        return response
    }

    /// The answer to a refusal or failure; a server-side one is logged.
    func errorResponse(_ error: ProxyError) -> ProxyResponse {
        if error.status.code >= 500 {
            logger.notice("request failed", metadata: ["status": "\(error.status.code)", "reason": "\(error.reason)"])
        }
        return responses.error(error)
    }

    /// The path after its first segment (the signature), which `/status` may show.
    static func withoutSignature(_ path: Substring) -> Substring {
        let afterSlash = path.dropFirst()
        guard let end = afterSlash.firstIndex(of: "/") else { return path }
        return afterSlash[end...]
    }
}
