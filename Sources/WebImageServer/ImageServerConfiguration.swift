public import Foundation
public import WebImage
public import WebImageS3
public import WebImageGCS

/// Everything `webimage serve` takes, with imgproxy's defaults where it has one and safer ones
/// where it does not (private addresses are refused too). Each property is a flag and a
/// `WEBIMAGE_*` variable of the command, declared once in the settings' table; docs/serve.md's
/// table lists them.
public struct ImageServerConfiguration: Sendable {
    /// The address to listen on. Default `127.0.0.1`.
    public var host = "127.0.0.1"
    /// The port; 0 picks a free one (``ImageServer/port`` tells which). Default 8080.
    public var port = 8080
    /// Key and salt pairs whose signatures are accepted; the first signs. Default none.
    public var signingKeys: [SigningKey] = []
    /// Bytes of the digest a signature keeps, 1...32. Default 32.
    public var signatureSize = 32
    /// Accept any signature segment (`unsafe`). Must be asked for; default false.
    public var allowsUnsigned = false
    /// Fetch sources on loopback addresses (tests, demos). Default false.
    public var allowsLoopbackSources = false
    /// The addresses sources may be fetched from, judged at connect time on every redirect hop:
    /// by default every address that is not public unicast is refused. Add networks or host
    /// names here for an internal image service; ``allowsLoopbackSources`` adds loopback.
    public var sourceAddressPolicy = AddressPolicy()
    /// Resolves source host names for the address guard. Default the system's resolver.
    public var hostResolver: any HostResolver = SystemHostResolver()
    /// Source URL prefixes allowed; empty allows every public http(s) source. Judged on the source
    /// and on every redirect hop, after RFC 3986 normalisation (dot segments removed), with the
    /// scheme, host and port equal and the path continuing the prefix's at a `/`, so that
    /// `https://a.com` cannot match `https://a.com@evil.com`, `https://a.com.evil.com` or
    /// `https://a.com:8443/`, and `https://a.com/f` not `https://a.com/f/../private`. Default empty.
    public var allowedSources: [String] = []
    /// Answer WebP to clients whose `Accept` lists it when the URL names no format. Default false.
    public var autoWebP = false
    /// Answer AVIF likewise (preferred over WebP when both are accepted and on). Default false.
    public var autoAVIF = false
    /// Answer JPEG XL likewise (preferred over AVIF and WebP, as imgproxy orders them). Default false.
    public var autoJXL = false
    /// Answer WebP to clients whose `Accept` lists it even when the URL names another format
    /// (imgproxy's `IMGPROXY_ENFORCE_WEBP`). Default false.
    public var enforceWebP = false
    /// Answer AVIF likewise, for still sources (`IMGPROXY_ENFORCE_AVIF`). Default false.
    public var enforceAVIF = false
    /// Answer JPEG XL likewise, for still sources (`IMGPROXY_ENFORCE_JXL`). Default false.
    public var enforceJXL = false
    /// For a URL without a format: the source's format is kept when it is one of these, else the
    /// first of them that can hold the result (GIF or WebP for an animation, not JPEG for
    /// transparency) is written (imgproxy's `IMGPROXY_PREFERRED_FORMATS`). Default JPEG, PNG, GIF.
    public var preferredFormats: [ImageFormat] = [.jpeg, .png, .gif]
    /// Where processed results (`results/`) and fetched sources (`sources/`) are kept. Default
    /// `~/.cache/webimage/serve`.
    public var cacheDirectory: URL?
    /// The most bytes the result cache keeps. Default 1 GiB.
    public var resultCacheBytes = 1024 * 1024 * 1024
    /// The most bytes of recent results kept in memory in front of the result cache, so that a
    /// hot result is served without a file read (0 keeps none). Default 64 MiB.
    public var resultMemoryCacheBytes = 64 * 1024 * 1024
    /// The most bytes the source cache keeps. Default 1 GiB.
    public var sourceCacheBytes = 1024 * 1024 * 1024
    /// The most pixels a source may declare, in megapixels (an animation's frames together).
    /// Default 50, imgproxy's.
    public var maximumSourceMegapixels = 50.0
    /// The most bytes read from a source, stopped while streaming. Default 50 MiB.
    public var maximumSourceBytes = 50 * 1024 * 1024
    /// The most frames of an animated source kept: the first ones of a longer one, as imgproxy
    /// keeps them (1 makes every result a still). Default 100.
    public var maximumAnimationFrames = 100
    /// The most pixels of each frame of an animated source, in megapixels: when above 0, an
    /// animation is checked frame by frame instead of all its frames together, as
    /// `IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION` does. Default 0.
    public var maximumAnimationFrameMegapixels = 0.0

    /// Whether video sources (MP4, QuickTime, WebM) are answered with a frame, processed like
    /// any image (imgproxy Pro's `IMGPROXY_ENABLE_VIDEO_THUMBNAILS`); off, a video source is a
    /// 422. Needs a build with the package's `Video` trait, which ``validate()`` checks. Default false.
    public var enableVideoThumbnails = false
    /// Which frame a video source gives when the URL does not say (`vts`, `vtk`), and the bounds
    /// of its decode: by default the first keyframe (imgproxy's default is the frame at 1 s).
    public var videoThumbnails = VideoFrameSelection()
    /// `s3://BUCKET/KEY` sources (`IMGPROXY_USE_S3` and the `IMGPROXY_S3_*` settings): the
    /// client's settings and the buckets sources may name; nil reads none. The endpoint is the
    /// operator's, reached wherever it is (loopback and private addresses too), while the
    /// address guard still judges every http(s) source: a source URL never chooses the endpoint.
    /// Default nil.
    public var s3Sources: S3Sources?
    /// `gs://BUCKET/OBJECT` sources, read with this client (imgproxy's `IMGPROXY_USE_GCS`); nil:
    /// refused with 400. Default nil.
    public var gcsSources: GCSSources?
    /// Processed results also kept in a bucket the fleet shares, behind each node's memory and
    /// disk tiers (`IMGPROXY_CACHE_USE=s3`, `IMGPROXY_CACHE_BUCKET`, `IMGPROXY_CACHE_S3_*`): a
    /// node with an empty disk answers from it without fetching or processing. nil: none.
    /// Default nil.
    public var resultBucket: ResultBucketSettings?
    /// What ends an `s3://` source's key and starts its version
    /// (`IMGPROXY_SOURCE_URL_QUERY_SEPARATOR`): `s3://bucket/key?VERSION`. Empty: the whole
    /// rest is the key. Default `?`, imgproxy's.
    public var sourceURLQuerySeparator = "?"
    /// The folder `local:///PATH` sources are read from (`IMGPROXY_LOCAL_FILESYSTEM_ROOT`); no path
    /// or link leads out of it. Default none: only the playground's demo images are local.
    public var localFilesystemRoot: String?
    /// How results are encoded beyond their quality (imgproxy's `IMGPROXY_JPEG_PROGRESSIVE`,
    /// `_WEBP_EFFORT`, `_AVIF_SPEED`, `_JXL_EFFORT`). Changed settings are seen by results made
    /// after the change. Default the encoders' own.
    public var encoding = EncoderSettings()
    /// Answers name their http(s) source as the canonical URL, `Link: <SOURCE>; rel="canonical"`
    /// (`IMGPROXY_SET_CANONICAL_HEADER`). Default false.
    public var setsCanonicalHeader = false
    /// Source formats answered as they are, unless the URL asks for another format
    /// (`IMGPROXY_SKIP_PROCESSING_FORMATS`); URLs add to it with `skp`. Default none.
    public var skipProcessingFormats: Set<ImageFormat> = []
    /// Whether URLs may set their own source and result limits (`msr`, `msfs`, `maf`, `mafr`,
    /// `mrd`), as `IMGPROXY_ALLOW_SECURITY_OPTIONS` lets them; without it they answer 403. A URL's
    /// `msfs` cannot go above ``maximumSourceBytes``, which the shared download enforces while
    /// streaming. Default false.
    public var allowsSecurityOptions = false
    /// The largest width or height of a result. A request for more is scaled down to fit, as
    /// imgproxy does. Default 8192.
    public var maximumResultDimension = 8192
    /// The most pixels of a result, and of anything made on the way to it, in megapixels. A
    /// request for more is scaled down to fit. With ``maximumSourceMegapixels`` it bounds a
    /// request's memory (docs/deploy.md has the measured peaks). Default 40.
    public var maximumResultMegapixels = 40.0
    /// Requests fetched and processed at once. Default the number of cores.
    public var concurrency = ProcessInfo.processInfo.activeProcessorCount
    /// Requests that wait for a free slot; one more is answered 503 with `Retry-After`.
    /// Default 64.
    public var queueLength = 64
    /// `Cache-Control: max-age` of a result, in seconds. Default one year (URLs are immutable).
    public var resultTTL = 31_536_000
    /// `Cache-Control: max-age` of an error. Default 10 seconds.
    public var errorTTL = 10
    /// Named option lists for `preset`/`pr` (`thumb` → `rs:fill:150:150/q:70`); `default` applies
    /// to every URL first. Default none.
    public var presets: [String: String] = [:]
    /// Source downloads running at once from one host, on top of the overall limit, so that a
    /// page full of one site's images does not open dozens of connections to it. Default 8.
    public var maximumDownloadsPerHost = 8
    /// The most a source download may take, redirects included. Default 10 seconds.
    public var downloadTimeout: Duration = .seconds(10)
    /// The most a whole request may take before it is answered 504. Default 30 seconds.
    public var requestTimeout: Duration = .seconds(30)
    /// The most decoding, transforming and encoding one result may take before the request is
    /// answered 504. The work itself runs to its end (a decoder cannot be stopped midway) and
    /// its result is dropped. Default 20 seconds.
    public var processingTimeout: Duration = .seconds(20)
    /// How long an idle connection to a source's host stays open for the next fetch
    /// (`IMGPROXY_CLIENT_KEEP_ALIVE_TIMEOUT`); zero reuses none. Default nil: AsyncHTTPClient's
    /// 60 seconds (imgproxy's is 90).
    public var sourceKeepAliveTimeout: Duration?
    /// Redirects followed per source. Default 10.
    public var maximumRedirects = 10
    /// Seconds a client connection may sit idle before it is closed. Default 60.
    public var idleTimeout = 60
    /// The most a request may take to arrive whole, from its first byte (`IMGPROXY_READ_REQUEST_TIMEOUT`);
    /// past it the connection is closed. Default 10 seconds, imgproxy's.
    public var readRequestTimeout: Duration = .seconds(10)
    /// The most a response may take to be written whole (`IMGPROXY_WRITE_RESPONSE_TIMEOUT`); past
    /// it the connection is closed. Default 10 seconds, imgproxy's.
    public var writeResponseTimeout: Duration = .seconds(10)
    /// Client connections open at once (`IMGPROXY_MAX_CLIENTS`): at the limit the server stops
    /// accepting until one closes; 0 for no limit. Default 2048, imgproxy's.
    public var maximumClients = 2048
    /// How long a graceful stop waits for requests in flight before they are cancelled
    /// (`IMGPROXY_GRACEFUL_STOP_TIMEOUT`). Default nil: the request timeout and 5 seconds more, so
    /// that a drain cuts no request short (imgproxy's 20 seconds suit its 10-second timeout).
    public var gracefulStopTimeout: Duration?
    /// How long a client connection that is idle when the server starts draining stays open, so
    /// that a request its client (nginx, a load balancer) is already sending on it is answered,
    /// with `Connection: close`, instead of meeting the close. Default 1 second.
    public var drainGrace: Duration = .seconds(1)
    /// A port of its own for the operational routes (`--ops-bind`, imgproxy's
    /// `IMGPROXY_PROMETHEUS_BIND`): `/ready`, `/metrics` and `/status` move there from the public
    /// port, where only `/health` stays (a load balancer's or imgproxy's probe keeps working).
    /// Default nil: all of them on the public port.
    public var operationsPort: Int?
    /// The address the operations port listens on. Default 127.0.0.1.
    public var operationsHost = "127.0.0.1"
    /// The most bytes of request headers a client may send. Default 16 KiB.
    public var maximumRequestHeaderBytes = 16 * 1024
    /// Quality of lossy results when the URL gives none, 1...100. Default 80, imgproxy's.
    public var defaultQuality = 80
    /// Quality by format when the URL gives none, before ``defaultQuality`` (imgproxy's
    /// `IMGPROXY_FORMAT_QUALITY`). Default imgproxy's: WebP 79, AVIF 63, JPEG XL 77.
    public var formatQuality: [ImageFormat: Int] = [.webP: 79, .avif: 63, .jpegXL: 77]
    /// Serve `/playground`, a page to try options on the node's demo images or any source,
    /// which signs the URLs it makes. It answers loopback clients only unless
    /// ``playgroundToken`` is set and presented. Default false.
    public var playground = false
    /// A token that opens the playground to clients that are not on loopback (or that come
    /// through a proxy): `?token=...` or the `X-Playground-Token` header. Default none.
    public var playgroundToken: String?
    /// Serve `/status`, a page of the node's figures that refreshes itself. Like the playground
    /// it answers loopback clients only unless ``statusToken`` is set and presented; its table of
    /// slow requests shows their options and source hosts, never a source's path, query or
    /// credentials. Default true.
    public var statusPage = true
    /// A token that opens `/status` to clients that are not on loopback: `?token=...` or the
    /// `X-Status-Token` header. Default none.
    public var statusToken: String?
    /// Proxies in front of the node whose ``clientIPHeader`` names the client for the pages'
    /// loopback rule (a same-host nginx: `127.0.0.1/32`). A request through any other proxy is
    /// never a loopback client. Default none.
    public var trustedProxies: [IPNetwork] = []
    /// The one header a trusted proxy names the client in (nginx's `real_ip_header`); the client
    /// is its right-most address that is not a trusted proxy. The other forwarding headers are
    /// passed on from the client as it sent them and are never read. Default `X-Forwarded-For`,
    /// which the shipped nginx tier sets.
    public var clientIPHeader: ClientIPHeader = .forwardedFor
    /// A prefix every route is under (imgproxy's `IMGPROXY_PATH_PREFIX`, e.g. `/images`): a path
    /// without it is a 404. Default none.
    public var pathPrefix = ""
    /// A token every proxy request must carry as `Authorization: Bearer TOKEN` (imgproxy's
    /// `IMGPROXY_SECRET`), compared in constant time; a request without it is a 403. The health,
    /// readiness and metrics routes and the pages do not ask for it. Default none.
    public var secret: String?
    /// The `Access-Control-Allow-Origin` of proxy answers, with `Access-Control-Allow-Methods:
    /// GET, OPTIONS` (imgproxy's `IMGPROXY_ALLOW_ORIGIN`), for pages that draw results on a
    /// canvas. Default none: no CORS headers.
    public var allowOrigin: String?
    /// A second path answering like `/health` (imgproxy's `IMGPROXY_HEALTH_CHECK_PATH`). Default none.
    public var healthCheckPath: String?
    /// What is done to each source URL before it is judged and fetched: imgproxy's
    /// `IMGPROXY_URL_REPLACEMENTS`, then `IMGPROXY_BASE_URL`. Default nothing.
    public var sourceRewriting = SourceRewriting()
    /// A base64 source may be followed by a file name segment, ignored
    /// (`IMGPROXY_BASE64_URL_INCLUDES_FILENAME`). Default false.
    public var base64URLIncludesFilename = false
    /// The options part of a path is one segment of preset names, `:`-separated
    /// (`IMGPROXY_ONLY_PRESETS`). Default false.
    public var onlyPresets = false
    /// The option names a URL may use itself, as spelt in it (`IMGPROXY_ALLOWED_PROCESSING_OPTIONS`;
    /// presets may use any); another is a 404, as imgproxy answers it. Default nil: every option.
    public var allowedProcessingOptions: Set<String>?
    /// Signatures accepted as they are, without checking (`IMGPROXY_TRUSTED_SIGNATURES`). Default none.
    public var trustedSignatures: Set<String> = []
    /// Strip the source's metadata from results unless a URL says otherwise (`strip_metadata`'s
    /// default, `IMGPROXY_STRIP_METADATA`). Default true.
    public var stripMetadata = true
    /// Convert results to sRGB and drop the profile unless a URL says otherwise
    /// (`strip_color_profile`'s default, `IMGPROXY_STRIP_COLOR_PROFILE`). Default true.
    public var stripColorProfile = true
    /// Keep more than 8 bits a sample in results whose format holds them (16-bit PNG with the
    /// source's `cICP`, 10- or 12-bit AVIF with its `nclx`, 16-bit JPEG XL and TIFF) unless a URL says otherwise (`preserve_hdr`'s default,
    /// `IMGPROXY_PRESERVE_HDR`). Default false: results are 8-bit, PQ and HLG tone-mapped.
    public var preserveHDR = false
    /// Answer processed results with imgproxy's debug headers (`X-Origin-Width`, `-Height`,
    /// `-Content-Length`, `X-Result-Width`, `-Height`; `IMGPROXY_ENABLE_DEBUG_HEADERS`), kept with
    /// each result made while it is on. Default false.
    public var enablesDebugHeaders = false
    /// Keep the EXIF Copyright and Artist when metadata is stripped, unless a URL says otherwise
    /// (`keep_copyright`'s default, `IMGPROXY_KEEP_COPYRIGHT`). Default true, as imgproxy.
    public var keepCopyright = true
    /// Use a HEIF source's embedded thumbnail in place of its image unless a URL says otherwise
    /// (`enforce_thumbnail`'s default, `IMGPROXY_ENFORCE_THUMBNAIL`). Default false.
    public var enforceThumbnail = false
    /// Unsharp masking unless a URL says otherwise (`IMGPROXY_UNSHARP_MASKING_*`). Default nil:
    /// none, as imgproxy's open-source edition (its paid edition defaults to `auto`).
    public var unsharpMasking: UnsharpMasking?
    /// What a URL's `autoquality` starts from (`IMGPROXY_AUTOQUALITY_TARGET`, `_MIN`, `_MAX`).
    /// Default: no target, qualities 70 to 80 (imgproxy's).
    public var autoqualityDefaults = Autoquality(target: 0)
    /// Autoquality for every URL that does not turn it off (`IMGPROXY_AUTOQUALITY_METHOD=size`).
    /// Default false.
    public var autoqualityByDefault = false
    /// Apply the source's EXIF orientation unless a URL says otherwise (`auto_rotate`'s default,
    /// `IMGPROXY_AUTO_ROTATE`). Default true.
    public var autoRotate = true
    /// What separates an option's name and arguments in paths and presets
    /// (`IMGPROXY_ARGUMENTS_SEPARATOR`). Default `:`.
    public var argumentsSeparator = ":"
    /// Take the client's `DPR` and `Width` hints (and their `Sec-CH-` forms) as the default `dpr`
    /// and width (`IMGPROXY_ENABLE_CLIENT_HINTS`); answers then vary by them. Default false.
    public var enableClientHints = false
    /// The `User-Agent` of source requests (`IMGPROXY_USER_AGENT`). Default the downloader's
    /// (`ImageDownloaderConfiguration.userAgent`).
    public var userAgent = ImageDownloaderConfiguration.userAgent
    /// Accept sources whose TLS certificate does not verify (`IMGPROXY_IGNORE_SSL_VERIFICATION`).
    /// Default false.
    public var ignoresSSLVerification = false
    /// An image answered, processed with the request's options, when a source cannot be fetched
    /// (imgproxy's `IMGPROXY_FALLBACK_IMAGE_*`). Never stored in the result cache. Default none.
    public var fallbackImage: FallbackImage?
    /// The image `wm` lays over results; without one, `wm` changes nothing, as in imgproxy. A
    /// changed watermark is seen by results made after the change: stored ones keep the old one
    /// until they age out. Default none.
    public var watermark: WatermarkImage?
    /// Send the source's `ETag` (imgproxy v4's model: the origin's, or a local file's made from
    /// its path, size and time; none when the source has none), answer `If-None-Match`, and pass
    /// it to the source when the result is not stored (`IMGPROXY_USE_ETAG`). Default true.
    public var usesETag = true
    /// Wraps every `ETag` as imgproxy does (`"BUSTER/base64url(etag)"`), so that changing it
    /// makes clients fetch again: an `If-None-Match` not in this form is not passed on
    /// (`IMGPROXY_ETAG_BUSTER`). Default none.
    public var etagBuster = ""
    /// Send the source's `Last-Modified`, answer `If-Modified-Since`, and pass it to the source
    /// when the result is not stored (`IMGPROXY_USE_LAST_MODIFIED`). Default true.
    public var usesLastModified = true
    /// A `Last-Modified` older than this is sent as this, and an `If-Modified-Since` not after it
    /// is not passed on (`IMGPROXY_LAST_MODIFIED_BUSTER`). Default none.
    public var lastModifiedBuster: Date?

    /// The defaults.
    public init() {}

    /// Checks what can be checked before anything starts, as ``ImageProxy`` and ``ImageServer``
    /// check it when made: each setting's range and rule (the ones `webimage serve` holds its
    /// flags and variables to, which name the setting in the message), an allowed source that is
    /// not an `http(s)` URL prefix, an `s3://` prefix or a `local:///` one, and each preset,
    /// applied once as imgproxy's `validatePresets` does. A command or an application calls it to
    /// refuse a setting at once, as a usage error.
    /// - Throws: `WebImageError.Code.invalidArgument`, saying which setting, entry or preset.
    public func validate() throws(WebImageError) {
        if let broken = ServerSetting.brokenRules(of: self).first { throw WebImageError(.invalidArgument, broken) }
        _ = try SourceAllowList(allowedSources)
        do throws(ProxyError) {
            try OptionsParser(configuration: self).validatePresets()
        } catch {
            throw WebImageError(.invalidArgument, error.reason)
        }
    }

    /// Where the caches live.
    var resolvedCacheDirectory: URL {
        cacheDirectory ?? DiskCache.defaultDirectory(namespace: "serve")
    }
}

/// Where an image the server is configured with (the fallback image, the watermark) comes from.
public enum ConfiguredImageSource: Sendable, Equatable {
    /// The bytes themselves (imgproxy's `…_DATA`, and `…_PATH` read at start-up).
    case data(Data)
    /// A URL fetched like a source, through the source cache (`…_URL`).
    case url(URL)
}

/// The image a request gets instead of its source's when the source cannot be fetched.
public struct FallbackImage: Sendable, Equatable {
    public var source: ConfiguredImageSource
    /// The status of the answer; 0 answers with the source's own error status
    /// (`IMGPROXY_FALLBACK_IMAGE_HTTP_CODE`). Default 200, imgproxy's.
    public var status: Int
    /// The `max-age` of the answer; nil uses the result TTL (`IMGPROXY_FALLBACK_IMAGE_TTL`).
    public var ttl: Int?

    /// A fallback image.
    public init(source: ConfiguredImageSource, status: Int = 200, ttl: Int? = nil) {
        self.source = source
        self.status = status
        self.ttl = ttl
    }
}

/// The image `wm` lays over results (imgproxy's `IMGPROXY_WATERMARK_*`).
public struct WatermarkImage: Sendable, Equatable {
    public var source: ConfiguredImageSource
    /// Multiplies every URL's opacity, 0...1 (`IMGPROXY_WATERMARK_OPACITY`). Default 1.
    public var opacity: Double

    /// A watermark.
    public init(source: ConfiguredImageSource, opacity: Double = 1) {
        self.source = source
        self.opacity = opacity
    }
}

/// Encoder settings a server applies to every result.
public struct EncoderSettings: Sendable, Equatable {
    /// JPEG results are progressive. Default false, imgproxy's.
    public var jpegProgressive = false
    /// WebP's effort, 1 to 6. Default 4, imgproxy's and libwebp's.
    public var webPEffort = 4
    /// libwebp's preset (`IMGPROXY_WEBP_PRESET`). Default `default`, imgproxy's.
    public var webPPreset = WebPEncodingPreset.default
    /// AVIF's speed, 0 (slowest) to 9. Default 6 here (imgproxy's is 8).
    public var avifSpeed = 6
    /// JPEG XL's effort, 1 to 9; lowered further when a large result's encoder would not fit its
    /// memory budget. Default 7 here (imgproxy's is 4).
    public var jxlEffort = 7
    /// PNG's deflate level (libdeflate's), 0 to 9. Default 4, the codec's own default: files about
    /// the size of libvips' at its level 6, in half the time (imgproxy has no setting for it).
    public var pngCompressionLevel = EncodeOptions().pngCompressionLevel
    /// PNG results are Adam7 interlaced (`IMGPROXY_PNG_INTERLACED`). Default false, imgproxy's.
    public var pngInterlaced = false
    /// PNG results are reduced to a palette (`IMGPROXY_PNG_QUANTIZE`). Default false, imgproxy's.
    public var pngQuantize = false
    /// The most colours of a quantised PNG, 2 to 256 (`IMGPROXY_PNG_QUANTIZATION_COLORS`); its
    /// palette indexes take 8 bits above 16 colours, 4 above 4, 2 above 2, else 1, as imgproxy's.
    /// Default 256, imgproxy's.
    public var pngQuantizationColors = 256

    /// The encoders' own settings.
    public init() {}
}

/// Where `s3://` sources are read from, and which buckets they may name.
public struct S3Sources: Sendable {
    /// The client's endpoint, region, addressing and credentials.
    public var client: S3Configuration
    /// The only buckets sources may name (`IMGPROXY_S3_ALLOWED_BUCKETS`); empty: any. Default empty.
    public var allowedBuckets: [String]
    /// Buckets sources may never name (`IMGPROXY_S3_DENIED_BUCKETS`). Default empty.
    public var deniedBuckets: [String]

    /// Creates settings.
    public init(client: S3Configuration, allowedBuckets: [String] = [], deniedBuckets: [String] = []) {
        self.client = client
        self.allowedBuckets = allowedBuckets
        self.deniedBuckets = deniedBuckets
    }

    /// imgproxy's rule: on the allowed list when there is one, and not on the denied list.
    public func allows(bucket: String) -> Bool {
        (allowedBuckets.isEmpty || allowedBuckets.contains(bucket)) && !deniedBuckets.contains(bucket)
    }
}

/// Where `gs://` sources are read from, and which buckets they may name.
public struct GCSSources: Sendable {
    /// The client's endpoint and credentials (`IMGPROXY_GCS_ENDPOINT`, `IMGPROXY_GCS_KEY`, else
    /// Google's default credentials).
    public var client: GCSConfiguration
    /// The only buckets sources may name (`IMGPROXY_GCS_ALLOWED_BUCKETS`); empty: any. Default empty.
    public var allowedBuckets: [String]
    /// Buckets sources may never name (`IMGPROXY_GCS_DENIED_BUCKETS`). Default empty.
    public var deniedBuckets: [String]

    /// Creates settings.
    public init(client: GCSConfiguration, allowedBuckets: [String] = [], deniedBuckets: [String] = []) {
        self.client = client
        self.allowedBuckets = allowedBuckets
        self.deniedBuckets = deniedBuckets
    }

    /// imgproxy's rule (`common.IsBucketAllowed`): on the allowed list when there is one, and
    /// not on the denied list.
    public func allows(bucket: String) -> Bool {
        (allowedBuckets.isEmpty || allowedBuckets.contains(bucket)) && !deniedBuckets.contains(bucket)
    }
}

/// Where processed results are shared (`IMGPROXY_CACHE_USE=s3`).
public struct ResultBucketSettings: Sendable {
    /// The client's endpoint, region, addressing and credentials (`IMGPROXY_CACHE_S3_*`).
    public var client: S3Configuration
    /// The bucket (`IMGPROXY_CACHE_BUCKET`).
    public var bucket: String
    /// Put before every object key (`IMGPROXY_CACHE_PATH_PREFIX`), as `results/`. Default empty.
    public var keyPrefix: String
    /// A bucket that cannot be read answers 502 rather than processing without it
    /// (`IMGPROXY_CACHE_REPORT_ERRORS`). Default false.
    public var reportsErrors: Bool

    /// Creates settings.
    public init(client: S3Configuration, bucket: String, keyPrefix: String = "", reportsErrors: Bool = false) {
        self.client = client
        self.bucket = bucket
        self.keyPrefix = keyPrefix
        self.reportsErrors = reportsErrors
    }
}
