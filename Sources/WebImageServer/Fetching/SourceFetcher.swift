import Foundation
import Logging
import Tracing
import WebImage

/// The fetch stage: every byte a request needs that is not its result. A source (`http(s)`,
/// `s3` and `gs` through ``RemoteSources``; `local:///` from the configured root or the
/// playground's images), a watermark, the fallback image. Each fetch is timed, counted and
/// traced here, and a source fetched twice is noted.
final class SourceFetcher: Sendable {
    let remote: RemoteSources
    /// The playground's demo images, the only `local:///` sources; nil without the playground.
    private let demos: DemoSources?
    /// `local:///` sources under the configured root.
    private let localFiles: LocalFileSource?
    /// Sources this node has downloaded, by URL (the last 65,536): a second download of one is
    /// counted and logged (``ServerMetrics/sourceRefetches``), so that a repeated fetch shows.
    private let downloadedSources = MemoryCache<Bool>(configuration: MemoryCacheConfiguration(countLimit: 65_536))
    private let configuredWatermark: WatermarkImage?
    private let metrics: ServerMetrics
    private let logger: Logger
    private let tracer: (any Tracer)?

    init(configuration: ImageServerConfiguration, telemetry: Telemetry, metrics: ServerMetrics, demos: DemoSources?) throws(WebImageError) {
        // The local root first: a root that cannot be opened fails before the clients start.
        localFiles = try configuration.localFilesystemRoot.map { root throws(WebImageError) in
            try LocalFileSource(root: root, maximumBytes: configuration.maximumSourceBytes)
        }
        remote = try RemoteSources(configuration: configuration, telemetry: telemetry)
        self.demos = demos
        configuredWatermark = configuration.watermark
        self.metrics = metrics
        logger = telemetry.logger("server")
        tracer = telemetry.activeTracer
    }

    /// The URL to fetch for `source`: an http(s), s3 or gs source as the allow-list and the
    /// bucket rules normalise it; a `local:///` one as it is, once the allow-list's `local://`
    /// entries allow it (the playground's demo images are not judged).
    func judged(_ source: URL) throws(ProxyError) -> URL {
        if source.scheme != ProxyPath.localScheme { return try remote.allowedSource(source) }
        if demos == nil { try remote.checkLocalSource(source) }
        return source
    }

    /// The source's bytes, timed and counted, as a span when traced.
    func fetch(_ source: URL) async throws(ProxyError) -> FetchedSource {
        switch try await fetch(source, asking: nil) {
        case .fetched(let fetched): return fetched
        case .notModified: throw ProxyError(status: 502, "the source answered 304 to a request without conditions")
        }
    }

    /// The source for a request with conditions, as imgproxy v4 fetches it: the `validators` (a
    /// request's ``Conditions/forwarded`` or ``Conditions/passedThrough``) go to the origin (or are
    /// judged against the source cache's copy, or the file's validators, as the origin would
    /// judge them), and a source that has not changed is not fetched.
    func fetch(_ source: URL, asking validators: HTTPValidators?) async throws(ProxyError) -> ConditionalFetch {
        try await withStageSpan("fetch", tracer: tracer) { () async throws(ProxyError) in
            let start = ContinuousClock.now
            let answer =
                source.scheme == ProxyPath.localScheme
                ? .fetched(try await local(source, since: start)) : try await fetchRemote(source, asking: validators, since: start)
            // A file, a cached copy or an origin that ignored the conditions: judged as the origin
            // would have judged them.
            if case .fetched(let fetched) = answer, let validators,
                Conditions.unchanged(asked: validators, etag: fetched.etag, lastModified: fetched.lastModified)
            {
                return .notModified(etag: fetched.etag, lastModified: fetched.lastModified)
            }
            return answer
        }
    }

    private func local(_ source: URL, since start: ContinuousClock.Instant) async throws(ProxyError) -> FetchedSource {
        if let demo = demos?.source(path: source.path) {
            return FetchedSource(data: demo.data, seconds: ContinuousClock.now.seconds(since: start))
        }
        guard let localFiles else {
            throw .notFound("no local source \(source.path) (without --local-filesystem-root only the playground's images are local)")
        }
        let file = try await localFiles.load(source.path)
        return FetchedSource(
            data: file.data, seconds: ContinuousClock.now.seconds(since: start), etag: file.etag, lastModified: file.lastModified)
    }

    private func fetchRemote(_ source: URL, asking validators: HTTPValidators?, since start: ContinuousClock.Instant)
        async throws(ProxyError)
        -> ConditionalFetch
    {
        let answer: RemoteSources.Answer
        do throws(ProxyError) {
            answer = try await remote.fetch(source, validators: validators)
        } catch {
            // A fetch every request waiting for it left (their deadlines passed, their clients
            // went) is cancelled, though the origin was asked: counted, so that the next request's
            // fetch of the same source is seen for what it is.
            if let kind = error.sourceFailure ?? (error.status.code == 499 ? "cancelled" : nil) { metrics.countSourceError(kind: kind) }
            throw error
        }
        let seconds = ContinuousClock.now.seconds(since: start)
        metrics.fetchDuration.recordSeconds(seconds)
        let fetched: ImageData
        switch answer {
        case .notModified(let etag, let lastModified): return .notModified(etag: etag, lastModified: lastModified)
        case .bytes(let bytes): fetched = bytes
        }
        if fetched.cacheType != .none {
            metrics.sourceHits.increment()
        } else {
            metrics.bytesIn.increment(by: Int64(fetched.data.count))
            noteDownload(of: source)
        }
        return .fetched(
            FetchedSource(data: fetched.data, seconds: seconds, etag: fetched.metadata.etag, lastModified: fetched.metadata.lastModified))
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

    /// The watermark's bytes when `options` lay one: `wmt`'s text drawn, `wmu`'s URL judged and
    /// fetched as a source is, or the configured watermark (its data, or its URL fetched like a
    /// source, through the source cache).
    func watermark(for options: ProcessingOptions) async throws(ProxyError) -> ImageProcessor.Watermark? {
        guard let placing = options.watermark, placing.opacity > 0 else { return nil }
        if let markup = placing.text {
            // `wmt`: the text drawn through the SVG coder, cut to its ink when laid.
            return ImageProcessor.Watermark(
                data: Data(try TextWatermark.svg(markup: markup).utf8), opacity: configuredWatermark?.opacity ?? 1, isText: true)
        }
        if let url = placing.url {
            return ImageProcessor.Watermark(
                data: try await fetch(try remote.allowedSource(url)).data, opacity: configuredWatermark?.opacity ?? 1)
        }
        guard let configuredWatermark else { return nil }
        return ImageProcessor.Watermark(data: try await bytes(of: configuredWatermark.source), opacity: configuredWatermark.opacity)
    }

    /// The fallback image's bytes, for a request whose source failed with `sourceError`: that
    /// error is thrown again when the fallback's own URL fails (the client is told of its
    /// source's failure, not of the fallback's).
    func fallbackBytes(_ fallback: FallbackImage, replacing sourceError: ProxyError) async throws(ProxyError) -> Data {
        do throws(ProxyError) {
            return try await bytes(of: fallback.source)
        } catch {
            logger.warning("the fallback image could not be fetched", metadata: ["reason": "\(error.reason)"])
            throw sourceError
        }
    }

    private func bytes(of configured: ConfiguredImageSource) async throws(ProxyError) -> Data {
        switch configured {
        case .data(let data): return data
        case .url(let url): return try await fetch(url).data
        }
    }

    /// Shuts the remote sources' clients down and closes the source cache.
    func shutdown() async {
        await remote.shutdown()
    }
}
