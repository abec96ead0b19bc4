import Foundation
import WebImage

/// A source's bytes, its validators and how long it took to get them.
struct FetchedSource: Sendable {
    var data: Data
    var seconds: Double
    /// The source's `ETag`: its origin's (an HTTP server's, S3's, Cloud Storage's), or for a
    /// local file imgproxy's, made from its path, size and time of change. The result's ETag is
    /// this one, as imgproxy v4 makes it (`IMGPROXY_USE_ETAG`).
    var etag: String?
    /// The source's `Last-Modified`: its origin's, or a local file's time of change (imgproxy's
    /// `IMGPROXY_USE_LAST_MODIFIED` passes it on).
    var lastModified: String?
}

/// What a fetch with conditions found: the source, or that the client's copy is current.
enum ConditionalFetch: Sendable {
    case fetched(FetchedSource)
    /// The source has not changed since the client's copy: its validators, as its origin sent
    /// them with the 304 (or as the source cache or the file has them).
    case notModified(etag: String?, lastModified: String?)
}
