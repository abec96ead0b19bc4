/// How a ``CacheChain`` spreads one operation over its caches (SDWebImage's
/// `SDImageCachesManagerOperationPolicy`).
public enum CacheChainPolicy: Sendable, Hashable {
    /// Only the highest-priority cache (the last one).
    case highestOnly
    /// Only the lowest-priority cache (the first one).
    case lowestOnly
    /// One cache after another, highest priority first; a query or lookup stops at the first hit.
    case serial
    /// All caches at once; a query or lookup takes the first hit to arrive.
    case concurrent
}
