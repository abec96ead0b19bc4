public import Foundation

/// Makes the cache key of a URL (SDWebImage's `SDWebImageCacheKeyFilter`), for example to drop a
/// signature query parameter that changes on every request. Returning nil uses the URL's
/// absolute string.
public struct CacheKeyFilter: Sendable {
    /// The filter.
    public let key: @Sendable (URL) -> String?

    /// Wraps a closure.
    public init(_ key: @escaping @Sendable (URL) -> String?) {
        self.key = key
    }
}
