/// Which tier of an image cache (SDWebImage's `SDImageCacheType`): where a result came from, or
/// which tiers a request reads or writes.
public enum ImageCacheType: Sendable, Hashable, CaseIterable {
    /// No cache: a miss, or a request that skips caching.
    case none
    /// The memory cache.
    case memory
    /// The disk cache.
    case disk
    /// Memory and disk (a request value only).
    case all

    /// Whether the value includes the memory tier.
    public var includesMemory: Bool { self == .memory || self == .all }
    /// Whether the value includes the disk tier.
    public var includesDisk: Bool { self == .disk || self == .all }
}
