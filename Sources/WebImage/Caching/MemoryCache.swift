import CoreMetrics

/// A thread-safe, size-limited in-memory cache with least-recently-used eviction.
///
/// Each entry has a cost in bytes. The cache holds its cost and count limits at every moment: an
/// insert that would go over evicts the least recently used entries before the lock is released,
/// so no reader ever sees the cache over its limits. An entry costing more than
/// ``MemoryCacheConfiguration/maximumEntryFraction`` of the cost limit is not kept. Unlike Foundation's
/// `NSCache` on Linux, eviction is never cheapest-first, and memory pressure is handled through
/// ``handleMemoryPressure()``.
///
/// The entries are spread over shards by key hash, each with its own lock, its own
/// least-recently-used list and an equal share of the limits (the shard count drops for small
/// limits so that every shard can hold at least eight entries and the largest allowed entry).
/// A lookup takes one shard lock, one dictionary probe and a relink in that shard's list; it
/// allocates nothing.
public final class MemoryCache<Value: Sendable>: Sendable {
    /// The configuration the cache was created with.
    public let configuration: MemoryCacheConfiguration
    /// The cost above which an entry is not kept.
    public let maximumEntryCost: Int
    private let shards: [Locked<LRUList<CacheKey, Value>>]
    private let shardMask: Int
    private let evictionCounter: Counter

    /// Creates an empty cache.
    public init(configuration: MemoryCacheConfiguration = MemoryCacheConfiguration(), telemetry: Telemetry = .default) {
        self.configuration = configuration
        let shardCount = Self.shardCount(for: configuration)
        shardMask = shardCount - 1
        let costShares = Self.split(configuration.costLimit, into: shardCount)
        let countShares = Self.split(configuration.countLimit, into: shardCount)
        shards = (0..<shardCount).map { Locked(LRUList(costLimit: costShares[$0], countLimit: countShares[$0])) }
        let fractionLimit = configuration.costLimit == 0
            ? Int.max : Int(Double(configuration.costLimit) * configuration.maximumEntryFraction)
        maximumEntryCost = min(fractionLimit, costShares.min().map { $0 == 0 ? Int.max : $0 } ?? .max)
        evictionCounter = telemetry.counter(.memoryCacheEvictions)
    }

    /// The value for `key`, or nil when absent or expired. Marks the entry most recently used.
    public func value(for key: CacheKey) -> Value? {
        let now = configuration.timeToLive == nil ? nil : ContinuousClock.now
        return shard(for: key).withLock { $0.value(for: key, now: now) }
    }

    /// Whether a live entry exists for `key`, without marking it used.
    public func contains(_ key: CacheKey) -> Bool {
        let now = configuration.timeToLive == nil ? nil : ContinuousClock.now
        return shard(for: key).withLock { $0.contains(key, now: now) }
    }

    /// Stores `value` under `key` with a cost in bytes, evicting least recently used entries as
    /// needed. Returns false, and removes any older entry for the key, when the cost is above
    /// ``maximumEntryCost``.
    @discardableResult
    public func insert(_ value: Value, for key: CacheKey, cost: Int) -> Bool {
        let cost = max(0, cost)
        let expiry = configuration.timeToLive.map { ContinuousClock.now + $0 }
        let shard = shard(for: key)
        guard cost <= maximumEntryCost else {
            // Values leave the lock before they are released: a large image's deinit stays outside.
            let released = shard.withLock { $0.reject(key) }
            withExtendedLifetime(released) {}
            return false
        }
        let evicted = shard.withLock { $0.insert(value, for: key, cost: cost, expiry: expiry) }
        if !evicted.isEmpty { evictionCounter.increment(by: Int64(evicted.count)) }
        return true
    }

    /// Removes the entry for `key` and returns its value.
    @discardableResult
    public func removeValue(for key: CacheKey) -> Value? {
        shard(for: key).withLock { $0.remove(key) }
    }

    /// Removes every entry.
    public func removeAll() {
        for shard in shards {
            let released = shard.withLock { $0.removeAll() }
            withExtendedLifetime(released) {}
        }
    }

    /// Evicts least recently used entries until the total cost is at most `cost`.
    public func trim(toCost cost: Int) {
        let shares = Self.split(max(0, cost), into: shards.count)
        for (shard, share) in zip(shards, shares) {
            let removed = shard.withLock { $0.evict(downToCost: share, count: .max) }
            if !removed.isEmpty { evictionCounter.increment(by: Int64(removed.count)) }
        }
    }

    /// Evicts least recently used entries until at most `count` remain.
    public func trim(toCount count: Int) {
        let shares = Self.split(max(0, count), into: shards.count)
        for (shard, share) in zip(shards, shares) {
            let removed = shard.withLock { $0.evict(downToCost: .max, count: share) }
            if !removed.isEmpty { evictionCounter.increment(by: Int64(removed.count)) }
        }
    }

    /// Removes every entry whose time to live has passed.
    public func removeExpired() {
        let now = ContinuousClock.now
        for shard in shards {
            let released = shard.withLock { list in
                list.removeAll { _, _, expiry in expiry.map { $0 <= now } ?? false }
            }
            withExtendedLifetime(released) {}
        }
    }

    /// Trims the total cost to ``MemoryCacheConfiguration/pressureTrimFraction`` of what it is now. Linux
    /// sends no memory warnings: call this from whatever tells your process memory is short
    /// (a cgroup `memory.events` or PSI watcher, a signal, an admin endpoint).
    public func handleMemoryPressure() {
        trim(toCost: Int(Double(totalCost) * configuration.pressureTrimFraction))
    }

    /// The sum of the costs of the entries.
    public var totalCost: Int {
        shards.reduce(0) { total, shard in total + shard.withLock { $0.totalCost } }
    }

    /// The number of entries.
    public var count: Int {
        shards.reduce(0) { total, shard in total + shard.withLock { $0.count } }
    }

    /// Hits, misses, insertions, evictions and rejections so far.
    public var statistics: MemoryCacheStatistics {
        shards.reduce(into: MemoryCacheStatistics()) { total, shard in
            let part = shard.withLock { $0.statistics }
            total.hits += part.hits
            total.misses += part.misses
            total.insertions += part.insertions
            total.evictions += part.evictions
            total.rejections += part.rejections
        }
    }

    private func shard(for key: CacheKey) -> Locked<LRUList<CacheKey, Value>> {
        shards[key.hashValue & shardMask]
    }

    private static func shardCount(for configuration: MemoryCacheConfiguration) -> Int {
        var count = 1
        let entryCost = Double(configuration.costLimit) * configuration.maximumEntryFraction
        while count * 2 <= configuration.maximumShardCount {
            let next = count * 2
            if configuration.countLimit > 0 && configuration.countLimit / next < 8 { break }
            if configuration.costLimit > 0 && Double(configuration.costLimit / next) < entryCost { break }
            count = next
        }
        return count
    }

    /// Splits a limit into `parts` shares that add up to it exactly (0 stays "no limit").
    private static func split(_ limit: Int, into parts: Int) -> [Int] {
        (0..<parts).map { limit / parts + ($0 < limit % parts ? 1 : 0) }
    }
}
