import Foundation
import WebImage

/// A source's bytes and how they were got.
struct FetchedSource: Sendable {
    var data: Data
    var seconds: Double
    /// The source's `Last-Modified`, when its origin sent one (imgproxy's
    /// `IMGPROXY_USE_LAST_MODIFIED` passes it on).
    var lastModified: String?
    /// For bytes served from the source cache with the origin's validators, the entry they
    /// are: its URL, validators, expiry and length.
    var cacheEntry: CacheKey?
    /// The bytes' SHA-256, once a step that needed it has it (a revalidation that goes on
    /// to process the same bytes).
    var digest: [UInt8]?
}
