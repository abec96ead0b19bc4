import Foundation

/// Limits and policies of a ``MemoryCache``.
public struct MemoryCacheConfiguration: Sendable {
    /// The total cost allowed, in bytes; 0 means no limit.
    public var costLimit: Int
    /// The number of entries allowed; 0 means no limit.
    public var countLimit: Int
    /// How long an entry lives after it was stored; nil means until evicted.
    public var timeToLive: Duration?
    /// An entry costing more than this fraction of ``costLimit`` is not kept. Default 0.1.
    public var maximumEntryFraction: Double
    /// ``MemoryCache/handleMemoryPressure()`` trims the total cost to this fraction of what it
    /// was. Default 0.5.
    public var pressureTrimFraction: Double
    /// How many shards, each with its own lock and LRU list, to spread the entries over
    /// (rounded down to a power of two). More shards mean fewer threads waiting on one lock.
    /// Default 32.
    public var maximumShardCount: Int

    /// Creates a configuration. The default cost limit comes from the machine, see
    /// ``defaultCostLimit``.
    public init(
        costLimit: Int = MemoryCacheConfiguration.defaultCostLimit,
        countLimit: Int = 0,
        timeToLive: Duration? = nil,
        maximumEntryFraction: Double = 0.1,
        pressureTrimFraction: Double = 0.5,
        maximumShardCount: Int = 32
    ) {
        self.costLimit = costLimit
        self.countLimit = countLimit
        self.timeToLive = timeToLive
        self.maximumEntryFraction = maximumEntryFraction
        self.pressureTrimFraction = pressureTrimFraction
        self.maximumShardCount = maximumShardCount
    }

    /// 20% of the memory this process may use, at most 1 GiB: the smaller of the physical
    /// memory and the cgroup v2 `memory.max` of the process's cgroup (when set).
    public static let defaultCostLimit: Int = defaultCostLimit(
        physicalMemory: Int(clamping: ProcessInfo.processInfo.physicalMemory),
        cgroupLimit: SystemMemory.cgroupMemoryLimit()
    )

    /// The default cost limit for a machine with `physicalMemory` bytes and an optional
    /// cgroup limit: 20% of the smaller, capped at 1 GiB.
    public static func defaultCostLimit(physicalMemory: Int, cgroupLimit: Int?) -> Int {
        let available = min(physicalMemory, cgroupLimit ?? .max)
        return min(available / 5, 1 << 30)
    }
}
