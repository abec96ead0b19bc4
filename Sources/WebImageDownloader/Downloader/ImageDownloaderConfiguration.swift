public import Foundation
public import NIOSSL

/// Limits, headers and policies of an ``ImageDownloader``, with SDWebImage's defaults.
public struct ImageDownloaderConfiguration: Sendable {
    /// Which queued download starts next among those of the same priority.
    public enum ExecutionOrder: Sendable {
        /// The oldest first.
        case fifo
        /// The newest first.
        case lifo
    }

    /// Downloads running at once. Default 6.
    public var maximumConcurrentDownloads: Int
    /// Per-host limits for crawlers: downloads at once and starts per second per host, and
    /// holding a host that answered `Retry-After`; hosts take turns for free slots. Nil, the
    /// default, leaves only the global limit, as SDWebImage does.
    public var hostPoliteness: HostPoliteness?
    /// How long to wait for the response to start, and between two pieces of its body; zero
    /// means the default, 15 s.
    public var timeout: Duration
    /// Queue order within one priority. Default FIFO.
    public var executionOrder: ExecutionOrder
    /// Headers sent with every request, in order. By default an `Accept` naming what
    /// `CodersManager.shared` decodes when the configuration is made
    /// (`CodersManager.acceptHeader`) and ``userAgent``.
    public var headers: [(name: String, value: String)]
    /// Basic-auth credentials, used when both are set. They answer a server's challenge (a `401`
    /// with `WWW-Authenticate: Basic`), as SDWebImage's URLSession credential does, and are then
    /// sent at once to that origin for the downloader's life; never to a host outside
    /// ``credentialHosts`` (when it names any), and never over plain `http` unless
    /// ``sendsCredentialsOverHTTP``.
    public var username: String?
    /// See ``username``.
    public var password: String?
    /// The hosts ``username`` and ``password`` may be sent to (exact, case-insensitive); empty,
    /// the default, answers any host's challenge over HTTPS.
    public var credentialHosts: [String] = []
    /// Whether a challenge over plain `http` is answered too, which sends the password readable
    /// by anyone on the path. Default false.
    public var sendsCredentialsOverHTTP = false
    /// How long a connection left idle stays open for the next download to the same host. Nil,
    /// the default, keeps AsyncHTTPClient's 60 seconds; zero sends `Connection: close` with every
    /// request, so that no connection is reused (imgproxy's `IMGPROXY_CLIENT_KEEP_ALIVE_TIMEOUT=0`).
    public var connectionIdleTimeout: Duration?
    /// The most body bytes accepted, with or without a `Content-Length`. Default 50 MiB.
    public var maximumBodySize: Int
    /// Redirects followed before giving up with `WebImageError.Code.tooManyRedirects`.
    /// Default 10 (imgproxy's and curl's browsers' usual limit; SDWebImage leaves it to
    /// URLSession, which allows 16).
    public var maximumRedirects: Int
    /// Decides each redirect hop: follow it, refuse it (the load fails with
    /// `WebImageError.Code.rejected`), or follow another URL instead. Nil follows every hop.
    /// The downloader follows redirects itself, so the hook, the address policy and the proxy
    /// choice see every hop; with a client of your own
    /// (``ImageDownloader/init(configuration:httpClient:telemetry:)``) hops that client follows
    /// by its own configuration are not seen.
    public var redirectHandler: (@Sendable (RedirectHop) -> RedirectDecision)?
    /// Which addresses connections may go to (the SSRF guard); nil, the default, connects
    /// anywhere, as SDWebImage does. With a policy every connection goes through an in-process
    /// guard that resolves names itself and judges the address actually connected to, on every
    /// redirect hop and every new connection; a refusal fails the load with
    /// `WebImageError.Code.refusedAddress`. See ``AddressPolicy``.
    public var addressPolicy: AddressPolicy?
    /// Resolves host names for the address guard (used only with an ``addressPolicy`` or
    /// ``resolvesHostNames``). Default the system's resolver.
    public var hostResolver: any HostResolver
    /// Whether every connection goes out through the in-process guard, which looks its name up
    /// with ``hostResolver``, also without an address policy (which implies it). Why: the
    /// resolver AsyncHTTPClient uses otherwise (NIO's) runs one lookup at a time per event loop,
    /// two at once on a two-core machine, and a crawl of thousands of hosts behind a slow DNS
    /// server waits on that queue until connections time out; through the guard, lookups run
    /// side by side, and with a ``CachingHostResolver`` each name is asked once. Not through a
    /// proxy (which looks names up itself) or a client handed to the downloader. Default false:
    /// an application loading from a few hosts gains nothing from the extra loopback hop.
    public var resolvesHostNames = false
    /// The proxies to go through, by URL scheme, and the hosts that bypass them; nil connects
    /// directly. ``ProxySettings/fromEnvironment(_:)`` reads curl's variables.
    public var proxy: ProxySettings?
    /// TLS for HTTPS: extra trusted certificate authorities, a client certificate for mutual
    /// TLS, protocol versions. Nil uses NIOSSL's defaults (the system's trust store).
    public var tlsConfiguration: TLSConfiguration?
    /// Status codes that carry an image. Default 200 to 299.
    public var acceptableStatusCodes: Range<Int>
    /// Media types accepted; nil accepts any `image/*` type, and `application/octet-stream` or a
    /// missing type when the bytes sniff as an image.
    public var acceptableContentTypes: Set<String>?
    /// When to try a failed download again. Default: 2 retries with backoff.
    public var retryPolicy: RetryPolicy
    /// The least progress, as a fraction of the expected length (0 to 1), between two progress
    /// reports (and partial data) to a download's callers; the first and the last always come.
    /// Default 0: every piece is reported (SDWebImage's default).
    public var minimumProgressInterval: Double
    /// The bytes of interrupted downloads kept, in all, for resuming them with `Range` and
    /// `If-Range`. Default 64 MiB; 0 turns resuming off.
    public var maximumResumableBytes: Int
    /// Changes each request before it is sent; returning nil cancels the download with
    /// `WebImageError.Code.rejected`.
    public var requestModifier: (@Sendable (DownloadRequest) async -> DownloadRequest?)?
    /// Changes or refuses each response head; returning nil fails the download with
    /// `WebImageError.Code.rejected`.
    public var responseModifier: (@Sendable (DownloadResponseHead) -> DownloadResponseHead?)?
    /// Response headers kept with the bytes (``LoadedData/retainedHeaders``, and from there with
    /// a cache entry's metadata), by name, compared without case: what a later use of a cached
    /// copy must judge again, as a crawler judges `X-Robots-Tag` on every use. Default none.
    public var retainedResponseHeaders: [String] = []
    /// Turns the downloaded bytes into the image bytes (for encrypted images); returning nil
    /// fails the download with `WebImageError.Code.rejected`.
    public var decryptor: (@Sendable (Data, DownloadResponseHead) -> Data?)?

    /// The `User-Agent` the downloader sends by default.
    public static let userAgent = "swift-web-image/\(WebImageRelease.version) (Linux; AsyncHTTPClient)"

    /// Creates a configuration.
    public init(
        maximumConcurrentDownloads: Int = 6,
        hostPoliteness: HostPoliteness? = nil,
        timeout: Duration = .seconds(15),
        executionOrder: ExecutionOrder = .fifo,
        headers: [(name: String, value: String)] = [
            ("Accept", CodersManager.shared.acceptHeader), ("User-Agent", ImageDownloaderConfiguration.userAgent),
        ],
        username: String? = nil,
        password: String? = nil,
        maximumBodySize: Int = 50 * 1024 * 1024,
        maximumRedirects: Int = 10,
        redirectHandler: (@Sendable (RedirectHop) -> RedirectDecision)? = nil,
        addressPolicy: AddressPolicy? = nil,
        hostResolver: any HostResolver = SystemHostResolver(),
        proxy: ProxySettings? = nil,
        tlsConfiguration: TLSConfiguration? = nil,
        acceptableStatusCodes: Range<Int> = 200..<300,
        acceptableContentTypes: Set<String>? = nil,
        retryPolicy: RetryPolicy = RetryPolicy(),
        minimumProgressInterval: Double = 0,
        maximumResumableBytes: Int = 64 * 1024 * 1024,
        requestModifier: (@Sendable (DownloadRequest) async -> DownloadRequest?)? = nil,
        responseModifier: (@Sendable (DownloadResponseHead) -> DownloadResponseHead?)? = nil,
        decryptor: (@Sendable (Data, DownloadResponseHead) -> Data?)? = nil
    ) {
        self.maximumConcurrentDownloads = max(1, maximumConcurrentDownloads)
        self.hostPoliteness = hostPoliteness
        self.timeout = timeout == .zero ? .seconds(15) : timeout
        self.executionOrder = executionOrder
        self.headers = headers
        self.username = username
        self.password = password
        self.maximumBodySize = maximumBodySize
        self.maximumRedirects = max(0, maximumRedirects)
        self.redirectHandler = redirectHandler
        self.addressPolicy = addressPolicy
        self.hostResolver = hostResolver
        self.proxy = proxy
        self.tlsConfiguration = tlsConfiguration
        self.acceptableStatusCodes = acceptableStatusCodes
        self.acceptableContentTypes = acceptableContentTypes
        self.retryPolicy = retryPolicy
        self.minimumProgressInterval = min(1, max(0, minimumProgressInterval))
        self.maximumResumableBytes = maximumResumableBytes
        self.requestModifier = requestModifier
        self.responseModifier = responseModifier
        self.decryptor = decryptor
    }
}
