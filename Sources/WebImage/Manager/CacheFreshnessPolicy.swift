public import Foundation

/// Whether a manager asks the origin's caching headers before using a cached image.
///
/// By default (``useCachedAsIs``, SDWebImage's behaviour) a cached image is used for as long as
/// the cache keeps it, whatever the origin said. With ``respectCacheControl(now:)`` the
/// freshness stored with the original's bytes (`HTTPFreshness`, from `Cache-Control`,
/// `Expires`, `Date`, `Age`) decides: a fresh entry is used; a stale one is revalidated with its
/// validators first (a 304 renews its freshness without a download, a 200 replaces it); within
/// `stale-while-revalidate` it is used at once and revalidated in the background. An entry
/// stored without freshness (a `file:` or `data:` load, an older cache) is used as it is, and so
/// is an image just downloaded whose disk write has not finished (`.waitStoreCache` waits for it).
/// `no-store` responses are never stored under either policy.
public struct CacheFreshnessPolicy: Sendable {
    /// Whether the stored freshness is consulted.
    public let respectsCacheControl: Bool
    /// The clock freshness is judged by (a test gives its own).
    public let now: @Sendable () -> Date

    /// Cached images are used as they are (the default).
    public static let useCachedAsIs = CacheFreshnessPolicy(respectsCacheControl: false, now: { Date() })

    /// Cached images are used while fresh, and revalidated once stale.
    public static func respectCacheControl(now: @escaping @Sendable () -> Date = { Date() }) -> CacheFreshnessPolicy {
        CacheFreshnessPolicy(respectsCacheControl: true, now: now)
    }
}
