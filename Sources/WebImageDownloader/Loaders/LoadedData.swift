public import Foundation

/// The bytes a loader brought, with what the response said about them.
public struct LoadedData: Sendable {
    /// The body (after any decryptor).
    public var data: Data
    /// The URL the bytes came from, after redirects.
    public var url: URL
    /// The HTTP status, or nil for `file:` and `data:` URLs.
    public var statusCode: Int?
    /// The media type the response declared, if any.
    public var contentType: String?
    /// The response's `ETag`.
    public var etag: String?
    /// The response's `Last-Modified`.
    public var lastModified: String?
    /// The response's `Cache-Control`.
    public var cacheControl: String?
    /// The response's `Expires`.
    public var expires: String?
    /// The response's `Date`.
    public var date: String?
    /// The response's `Age`.
    public var age: String?
    /// The values of the response headers the downloader was asked to keep
    /// (``ImageDownloaderConfiguration/retainedResponseHeaders``), by lower-cased name, each
    /// header's value apart and in order; empty when none was asked for or sent.
    public var retainedHeaders: [String: [String]] = [:]
    /// How the download went; nil for loaders that do not measure.
    public var metrics: DownloadMetrics?

    /// Whether a cache may keep these bytes: false when the response said `Cache-Control: no-store`.
    public var isStorable: Bool {
        guard let cacheControl else { return true }
        return !cacheControl.split(separator: ",").contains { $0.trimmingASCIIWhitespace().equalsIgnoringASCIICase("no-store") }
    }

    /// Creates a result.
    public init(
        data: Data, url: URL, statusCode: Int? = nil, contentType: String? = nil,
        etag: String? = nil, lastModified: String? = nil, cacheControl: String? = nil, expires: String? = nil, date: String? = nil,
        age: String? = nil
    ) {
        self.data = data
        self.url = url
        self.statusCode = statusCode
        self.contentType = contentType
        self.etag = etag
        self.lastModified = lastModified
        self.cacheControl = cacheControl
        self.expires = expires
        self.date = date
        self.age = age
    }
}
