import Foundation
import WebImage
import WebImageGCS
import WebImageS3

/// Gets an `http(s)`, `s3` or `gs` source's bytes through the library: ``ImageManager/data(for:)`` over a disk-only source
/// cache that follows the origin's caching headers (revalidating stale entries with `If-None-Match`),
/// and an ``ImageDownloader`` behind the address guard, with the byte cap enforced while
/// streaming, the redirect limit checked hop by hop, and one transfer per URL however many
/// requests want it.
final class RemoteSources: Sendable {
    let manager: ImageManager
    let cache: ImageCache
    private let downloader: ImageDownloader
    /// The client of `s3://` sources, when they are on: not behind the address guard, since its
    /// endpoint is the operator's and no source URL can change it.
    private let s3Client: S3Client?
    private let s3Sources: S3Sources?
    /// The client of `gs://` sources, when they are on; like S3's, its endpoint is the operator's.
    private let gcsClient: GCSClient?
    private let gcsSources: GCSSources?
    private let timeout: Duration
    private let allowList: SourceAllowList
    /// Whether sources whose certificate does not verify are fetched anyway.
    private let ignoresSSLVerification: Bool

    init(configuration: ImageServerConfiguration, telemetry: Telemetry) throws(WebImageError) {
        let allowList = try SourceAllowList(configuration.allowedSources)
        var policy = configuration.sourceAddressPolicy
        if configuration.allowsLoopbackSources { policy.allowedNetworks += ["127.0.0.0/8", "::1/128"].compactMap { IPNetwork($0) } }
        var downloads = ImageDownloaderConfiguration(
            maximumConcurrentDownloads: max(configuration.concurrency * 2, 8),
            // A proxy answers now: a source's 429 or 503 is a 502 at once, not a hold on its host.
            hostPoliteness: HostPoliteness(
                maximumConcurrentDownloadsPerHost: configuration.maximumDownloadsPerHost, honoursRetryAfter: false),
            timeout: configuration.downloadTimeout,
            headers: [("Accept", CodersManager.shared.acceptHeader), ("User-Agent", configuration.userAgent)],
            maximumBodySize: configuration.maximumSourceBytes, maximumRedirects: configuration.maximumRedirects,
            // Every hop is judged by the allow-list as the source was, and followed normalised.
            redirectHandler: allowList.isEmpty ? nil : Self.judging(allowList),
            addressPolicy: policy, hostResolver: configuration.hostResolver,
            // A proxy answers now or not at all: the client retries, not the server.
            retryPolicy: .none)
        downloads.connectionIdleTimeout = configuration.sourceKeepAliveTimeout
        downloader = ImageDownloader(configuration: downloads, telemetry: telemetry)
        let disk = try DiskCache(
            directory: configuration.resolvedCacheDirectory.appendingPathComponent("sources"),
            configuration: DiskCacheConfiguration(sizeLimit: configuration.sourceCacheBytes), telemetry: telemetry)
        cache = ImageCache(disk: disk, telemetry: telemetry)
        s3Sources = configuration.s3Sources
        var limits = configuration.s3Sources?.client
        limits?.timeout = configuration.downloadTimeout
        limits?.maximumObjectSize = configuration.maximumSourceBytes
        let s3Client = limits.map { S3Client(configuration: $0) }
        self.s3Client = s3Client
        gcsSources = configuration.gcsSources
        var gcsLimits = configuration.gcsSources?.client
        gcsLimits?.timeout = configuration.downloadTimeout
        gcsLimits?.maximumObjectSize = configuration.maximumSourceBytes
        let gcsClient = gcsLimits.map { GCSClient(configuration: $0) }
        self.gcsClient = gcsClient
        let buckets: [any ImageLoader] =
            (s3Client.map { [S3ImageLoader(client: $0)] } ?? []) + (gcsClient.map { [GCSImageLoader(client: $0)] } ?? [])
        let loader: any ImageLoader = buckets.isEmpty ? downloader : LoadersManager(loaders: [downloader] + buckets)
        manager = ImageManager(
            cache: cache, loader: loader, configuration: ImageManagerConfiguration(cacheFreshness: .respectCacheControl()),
            telemetry: telemetry)
        timeout = configuration.downloadTimeout
        self.allowList = allowList
        ignoresSSLVerification = configuration.ignoresSSLVerification
    }

    /// A redirect handler that follows a hop the list allows, normalised, and refuses the others.
    private static func judging(_ allowList: SourceAllowList) -> @Sendable (RedirectHop) -> RedirectDecision {
        { hop in
            guard let allowed = allowList.allowed(hop.to) else { return .refuse }
            return .rewrite(allowed)
        }
    }

    /// The URL to fetch for `source`: `source` itself when the allow-list is empty, else its
    /// normalised form when an entry allows it.
    /// - Throws: 403 when the allow-list does not allow it.
    func allowedSource(_ source: URL) throws(ProxyError) -> URL {
        if source.scheme == "s3", S3Location.hasDotSegment(source.path(percentEncoded: false)) {
            // Before the bucket rules: `s3://public/../secret/x` names `public`, but a store or a
            // front that cleans paths would read `secret`.
            throw .badRequest("an S3 source's key may not have . or .. segments")
        }
        if let location = S3Location(url: source) {
            try checkObject(
                scheme: "s3", store: "S3", bucket: location.bucket, key: location.key, named: location.description,
                bucketAllowed: s3Sources?.allows(bucket: location.bucket) == true)
            return source
        }
        if let location = GCSLocation(url: source) {
            try checkObject(
                scheme: "gs", store: "GCS", bucket: location.bucket, key: location.object, named: location.description,
                bucketAllowed: gcsSources?.allows(bucket: location.bucket) == true)
            return source
        }
        guard let allowed = allowList.allowed(source) else {
            throw .refusedSource("the source \(ProxyPath.shortened(source.absoluteString)) is not on the allowed list")
        }
        return allowed
    }

    /// Refuses a bucket's object that the allow-list, judging the source as written
    /// (`s3://BUCKET/KEY`, `gs://BUCKET/OBJECT`), does not allow (404), then one whose bucket the
    /// store's rules deny (403): imgproxy judges the source before its storage sees the bucket.
    private func checkObject(scheme: String, store: String, bucket: String, key: String, named name: String, bucketAllowed: Bool)
        throws(ProxyError)
    {
        guard allowList.allowsObject(scheme: scheme, bucket: bucket, key: key) else {
            throw .refusedSource("the source \(ProxyPath.shortened(name)) is not on the allowed list")
        }
        guard bucketAllowed else { throw .forbidden("access to the \(store) bucket \(bucket) is denied") }
    }

    /// Refuses a `local:///` source the allow-list does not allow (imgproxy judges them as any
    /// source): with a non-empty list, a `local://` entry must be a prefix of its cleaned path.
    func checkLocalSource(_ source: URL) throws(ProxyError) {
        guard allowList.allowsLocal(path: LocalFileSource.cleaned(source.path)) else {
            throw .refusedSource("the source local:///\(LocalFileSource.cleaned(source.path)) is not on the allowed list")
        }
    }

    /// What a fetch found: the bytes (from the source cache or the network), or the origin's 304.
    enum Answer: Sendable {
        case bytes(ImageData)
        case notModified(etag: String?, lastModified: String?)
    }

    /// The source's bytes and its response's metadata, from the source cache or the network;
    /// with `validators` (a client's conditions, passed on), a fresh cached copy or the
    /// origin's answer to them.
    func fetch(_ source: URL, validators: HTTPValidators?) async throws(ProxyError) -> Answer {
        // Bytes only, on disk only: the server decodes them at the size each request needs. The
        // fetch ends once the bytes are on disk (`data(for:)` waits for the store): written in the
        // background, a request for another variant of the source arriving between the end of the
        // load and the end of the write missed the cache and fetched the source again (seen in the
        // fleet test: 46 downloads for 45 sources on one node, in one run of four).
        var options: LoadOptions = [.retryFailed]
        if ignoresSSLVerification { options.insert(.allowInvalidSSLCertificates) }
        var request = ImageRequest(url: source, options: options)
        request.timeout = timeout
        do {
            guard let validators else { return .bytes(try await manager.data(for: request)) }
            return .bytes(try await manager.data(for: request, validators: validators))
        } catch let error as WebImageError {
            if error.code == .notModified {
                // An HTTP origin's 304 carries its head; S3's says only that the tag asked matched.
                let head = (error.underlyingError as? NotModifiedResponse)?.head
                return .notModified(etag: head?.header("ETag") ?? validators?.etag, lastModified: head?.header("Last-Modified"))
            }
            var failure = (error.underlyingError as? S3ServiceError).map { Self.proxyError($0, source: source) } ?? Self.proxyError(error)
            if error.code != .cancelled { failure.sourceFailure = error.code.httpStatus.map(Self.failureKind) ?? error.code.description }
            throw failure
        } catch {
            throw ProxyError(status: 499, "the request was cancelled")
        }
    }

    /// The metric label of a source's answer: the statuses worth a series of their own, else the
    /// class, so that an origin answering any of 900 statuses makes a handful of series.
    static func failureKind(status: Int) -> String {
        switch status {
        case 400, 401, 403, 404, 410, 429, 500, 502, 503, 504: return "http_\(status)"
        case 400..<500: return "http_4xx"
        case 500..<600: return "http_5xx"
        default: return "http_other"
        }
    }

    func shutdown() async {
        try? await downloader.shutdown()
        try? await s3Client?.shutdown()
        try? await gcsClient?.shutdown()
        try? cache.disk?.flush()
        cache.disk?.close()
    }

    /// The status an S3 error answers with: a missing object or bucket 404, refused credentials
    /// 403 (naming S3's code, never a key), anything else 502.
    static func proxyError(_ error: S3ServiceError, source: URL) -> ProxyError {
        let name = S3Location(url: source)?.description ?? "the S3 source"
        switch error.code {
        case .noSuchKey, .notFound: return .notFound("\(name) does not exist")
        case .noSuchBucket: return .notFound("the bucket of \(name) does not exist")
        case .accessDenied, .invalidAccessKeyID, .signatureDoesNotMatch, .requestTimeTooSkewed:
            return .forbidden("the S3 server refused to give \(name): \(error.code)")
        default: return ProxyError(status: 502, "the S3 server answered \(error.status) \(error.code) for \(name)")
        }
    }

    /// The status a fetch error answers with: the source's own 404 as 404, its other failures
    /// as 502 (bad gateway), a timeout as 504, a refused address as 404 (imgproxy v4's), a cap as 422.
    static func proxyError(_ error: WebImageError) -> ProxyError {
        if let status = error.code.httpStatus {
            return status == 404 || status == 410
                ? .notFound("the source answered \(status)") : ProxyError(status: 502, "the source answered \(status)")
        }
        switch error.code {
        case .refusedAddress:
            // The rule only: the address a name resolved to would make the server an oracle for
            // internal DNS.
            guard case .addressPolicy(let rule)? = error.refusal else {
                return .refusedSource("the source was refused by the address policy")
            }
            return .refusedSource("the source was refused by the address policy (\(rule))")
        case .timedOut: return ProxyError(status: 504, "the source did not answer in time")
        case .tooLarge: return .tooLarge("the source is over the byte limit: \(error.detail)")
        case .invalidURL: return .badRequest("the source URL is not valid")
        case .rejected:
            if case .redirect? = error.refusal { return .refusedSource("the source redirected to a URL that is not on the allowed list") }
            return .unsupported("the source is not an image: \(error.detail)")
        case .notAnImage, .unsupportedFormat: return .unsupported("the source is not an image: \(error.detail)")
        case .cancelled: return ProxyError(status: 499, "the request was cancelled")
        case .tooManyRedirects: return ProxyError(status: 502, "the source redirected too many times")
        default: return ProxyError(status: 502, "the source could not be fetched: \(error.detail)")
        }
    }
}
