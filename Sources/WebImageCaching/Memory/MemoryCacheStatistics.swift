/// What a ``MemoryCache`` has done since it was created.
public struct MemoryCacheStatistics: Sendable, Equatable {
    /// Lookups that found a live entry.
    public var hits = 0
    /// Lookups that found nothing, or an expired entry.
    public var misses = 0
    /// Entries stored or replaced.
    public var insertions = 0
    /// Entries removed to keep the limits.
    public var evictions = 0
    /// Entries refused for costing more than the largest allowed entry.
    public var rejections = 0
}
