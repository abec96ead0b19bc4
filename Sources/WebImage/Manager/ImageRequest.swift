public import Foundation

/// One image to load, as a value (Nuke's `ImageRequest`): the URL, or a full HTTP request
/// (method, headers, body, timeout), with the load's options and context.
///
/// The URL-taking methods of ``ImageManager`` (SDWebImage's names) are conveniences that make
/// one of these. The cache key comes from the URL (or the context's cache key filter) as
/// always: two requests for one URL that differ in their body share a cache entry unless a
/// ``CacheKeyFilter`` tells them apart; they never share a download.
///
/// ```swift
/// var request = ImageRequest(url: url, options: .retryFailed)
/// request.method = "POST"
/// request.headers = [("Content-Type", "application/json")]
/// request.body = Data(#"{"size":"large"}"#.utf8)
/// request.transformer = try TransformSpec.parse("resize:256x256:aspectfit")
/// let result = try await ImageManager.shared.image(for: request)
/// ```
public struct ImageRequest: Sendable {
    /// The image's URL; nil fails the load with `WebImageError.Code.invalidURL`.
    public var url: URL?
    /// The HTTP method. Default `GET`.
    public var method: String
    /// Headers for this request, each replacing the downloader's header of the same name.
    public var headers: [(name: String, value: String)]
    /// The request body, if any.
    public var body: Data?
    /// The most one attempt may take, from sending to the body's last byte; nil leaves it to the
    /// downloader's timeouts.
    public var timeout: Duration?
    /// How the load behaves.
    public var options: LoadOptions
    /// What the load needs beyond its options.
    public var context: LoadContext

    /// A `GET` of `url` with the given options and context.
    public init(url: URL?, options: LoadOptions = [], context: LoadContext = LoadContext()) {
        self.init(url: url, method: "GET", options: options, context: context)
    }

    /// A request with every part given.
    public init(
        url: URL?, method: String, headers: [(name: String, value: String)] = [], body: Data? = nil, timeout: Duration? = nil,
        options: LoadOptions = [], context: LoadContext = LoadContext()
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.options = options
        self.context = context
    }

    /// The transformer applied to the loaded image (``LoadContext/imageTransformer``).
    public var transformer: (any ImageTransformer)? {
        get { context.imageTransformer }
        set { context.imageTransformer = newValue }
    }
}
