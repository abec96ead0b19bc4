/// What a cached copy's response said about its version: sent back as `If-None-Match` and
/// `If-Modified-Since` to revalidate it.
public struct HTTPValidators: Sendable, Hashable {
    /// The stored `ETag`.
    public var etag: String?
    /// The stored `Last-Modified`.
    public var lastModified: String?

    /// Creates validators; nil when both are absent.
    public init?(etag: String?, lastModified: String?) {
        guard etag != nil || lastModified != nil else { return nil }
        self.etag = etag
        self.lastModified = lastModified
    }
}
