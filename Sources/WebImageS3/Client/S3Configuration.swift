public import Foundation
public import WebImageCore

/// Where an ``S3Client`` sends its requests and how: endpoint, region, addressing, credentials,
/// retries and limits. Every default is the AWS SDKs' where they have one.
public struct S3Configuration: Sendable {
    /// The service's base URL (`http://127.0.0.1:8333`, `https://ACCOUNT.r2.cloudflarestorage.com`);
    /// nil: AWS's, `https://s3.REGION.amazonaws.com`. Default nil.
    public var endpoint: URL?
    /// The region requests are signed for. Default `us-east-1`.
    public var region: String
    /// Path-style addressing (`endpoint/bucket/key`) rather than virtual-host
    /// (`bucket.endpoint/key`). Default false, as the AWS SDKs; most S3-compatible servers
    /// (MinIO, SeaweedFS) want true. A bucket name that cannot be a host name (upper case,
    /// `_`, or dots over https) is addressed by path either way, as the SDKs do.
    public var usesPathStyle: Bool
    /// The keys requests are signed with; nil sends them unsigned (a public bucket). Default nil.
    public var credentials: S3Credentials?
    /// Whether an upload's body is hashed into its signature (S3 then checks it arrived
    /// whole); false sends `UNSIGNED-PAYLOAD`. Default true.
    public var signsPayload: Bool
    /// How many times a request is tried in all when the answer is transient (5xx, 429,
    /// `SlowDown`, a lost or refused connection, a timeout). Default 3, the SDKs' standard mode.
    public var maximumAttempts: Int
    /// The first retry's delay ceiling; each later one doubles it, up to 20 s, and the delay is
    /// drawn at random below the ceiling ("full jitter", as the SDKs). Default 100 ms.
    public var retryBaseDelay: Duration
    /// How long one attempt may take, from the request to the last byte. Default 30 s.
    public var timeout: Duration
    /// The largest object a GET reads; a larger one is refused with `tooLarge` without reading
    /// it. Default 256 MiB.
    public var maximumObjectSize: Int

    /// Creates a configuration.
    public init(
        endpoint: URL? = nil, region: String = "us-east-1", usesPathStyle: Bool = false, credentials: S3Credentials? = nil,
        signsPayload: Bool = true, maximumAttempts: Int = 3, retryBaseDelay: Duration = .milliseconds(100),
        timeout: Duration = .seconds(30), maximumObjectSize: Int = 256 << 20
    ) {
        self.endpoint = endpoint
        self.region = region
        self.usesPathStyle = usesPathStyle
        self.credentials = credentials
        self.signsPayload = signsPayload
        self.maximumAttempts = max(1, maximumAttempts)
        self.retryBaseDelay = retryBaseDelay
        self.timeout = timeout
        self.maximumObjectSize = maximumObjectSize
    }

    /// A configuration from what ``AWSSettings/resolve(environment:)`` finds (credentials,
    /// region, endpoint), with path-style addressing when an endpoint is configured (an
    /// S3-compatible server) and virtual-host addressing for AWS.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws(WebImageError)
        -> S3Configuration
    {
        let settings = try AWSSettings.resolve(environment: environment)
        return S3Configuration(
            endpoint: settings.endpoint, region: settings.region ?? "us-east-1", usesPathStyle: settings.endpoint != nil,
            credentials: settings.credentials)
    }

    /// `text` as an endpoint: an http(s) URL with a host and nothing after the path's root.
    public static func endpointURL(_ text: String) throws(WebImageError) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty, url.query == nil, url.path.isEmpty || url.path == "/"
        else {
            throw WebImageError(.invalidArgument, "the S3 endpoint \(text) is not an http(s) URL of a host")
        }
        return url
    }
}
