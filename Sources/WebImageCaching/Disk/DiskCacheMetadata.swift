public import Foundation

/// What a ``DiskCache`` keeps beside an entry's bytes: the HTTP facts needed to revalidate it and
/// whatever the caller wants to attach (SDWebImage's extended data).
public struct DiskCacheMetadata: Sendable, Equatable {
    /// The response's `Content-Type`.
    public var contentType: String?
    /// The response's `ETag`, sent back as `If-None-Match`.
    public var etag: String?
    /// The response's `Last-Modified`, sent back as `If-Modified-Since`.
    public var lastModified: String?
    /// When the entry stops being served (from `Cache-Control: max-age` or `Expires`); nil
    /// leaves it to the cache's age limit.
    public var expires: Date?
    /// Caller-defined bytes stored with the entry.
    public var extendedData: Data?
    /// Response headers kept with the entry (a downloader's `retainedResponseHeaders`), by
    /// lower-cased name, each value apart: what every use of the entry judges again.
    public var retainedHeaders: [String: [String]] = [:]
    /// How long the response may be used without asking the origin, from its caching headers;
    /// consulted only by a manager that respects them, which sets it from the response.
    package var freshness: HTTPFreshness?

    /// Creates metadata; every field is optional.
    public init(
        contentType: String? = nil,
        etag: String? = nil,
        lastModified: String? = nil,
        expires: Date? = nil,
        extendedData: Data? = nil
    ) {
        self.init(
            contentType: contentType, etag: etag, lastModified: lastModified, expires: expires, extendedData: extendedData, freshness: nil)
    }

    /// Metadata with the manager's freshness.
    package init(
        contentType: String? = nil,
        etag: String? = nil,
        lastModified: String? = nil,
        expires: Date? = nil,
        extendedData: Data? = nil,
        freshness: HTTPFreshness?
    ) {
        self.contentType = contentType
        self.etag = etag
        self.lastModified = lastModified
        self.expires = expires
        self.extendedData = extendedData
        self.freshness = freshness
    }
}
