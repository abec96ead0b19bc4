import CoreMetrics
import Synchronization

/// A thread-safe, size-limited in-memory cache with least-recently-used eviction.
///
/// Each entry has a cost in bytes. The cache holds its cost and count limits at every moment: an
/// insert first reserves its cost and its place against the limits, evicting least recently used
/// entries until the reservation fits, and only then stores the entry, so no observer ever sees
/// the cache over a limit. An entry costing more than
/// ``MemoryCacheConfiguration/maximumEntryFraction`` of the cost limit is not kept. Unlike
/// Foundation's `NSCache` on Linux, eviction is never cheapest-first, and memory pressure is
/// handled through ``handleMemoryPressure()``.
///
/// The entries are spread over shards by key hash, each with its own lock and its own
/// least-recently-used list; totals are kept in atomics shared by the shards, and eviction takes
/// the oldest entry of one shard after another, which approximates global LRU order closely when
/// keys spread evenly. A lookup takes one shard lock, one table probe and a relink in that shard's
/// list; it allocates nothing and touches no shared counter.
public final class MemoryCache<Value: Sendable>: Sendable {
    /// The configuration the cache was created with.
    public let configuration: MemoryCacheConfiguration
    /// The cost above which an entry is not kept.
    public let maximumEntryCost: Int
    private let shards: [Locked<LRUList<CacheKey, Value>>]
    /// The same shards, unretained: the hot path reaches its shard without touching the
    /// shard's reference count, which two threads would otherwise both write on every lookup.
    /// `shards` keeps them alive for the cache's lifetime.
    @usableFromInline let unretainedShards: [Unmanaged<Locked<LRUList<CacheKey, Value>>>]
    @usableFromInline let shardMask: Int
    private let reservedCost = Atomic<Int>(0)
    private let reservedCount = Atomic<Int>(0)
    /// The next shard to evict from when making room.
    private let evictionCursor = Atomic<Int>(0)
    private let evictionCounter: Counter

    /// Creates an empty cache.
    public init(configuration: MemoryCacheConfiguration = MemoryCacheConfiguration(), telemetry: Telemetry = .default) {
        self.configuration = configuration
        var shardCount = 1
        while shardCount * 2 <= max(1, configuration.maximumShardCount) { shardCount *= 2 }
        shardMask = shardCount - 1
        shards = (0..<shardCount).map { _ in Locked(LRUList()) }
        unretainedShards = shards.map { Unmanaged.passUnretained($0) }
        maximumEntryCost =
            configuration.costLimit == 0
            ? Int.max : Int(Double(configuration.costLimit) * configuration.maximumEntryFraction)
        evictionCounter = telemetry.counter(.memoryCacheEvictions)
    }

    /// The value for `key`, or nil when absent or expired. Marks the entry most recently used.
    public func value(for key: CacheKey) -> Value? {
        inlinedValue(for: key)
    }

    /// ``value(for:)`` for the package's own callers (``ImageCache``), inlined into them so
    /// that it runs specialized for their value type: called through the module boundary, the
    /// generic lookup took several times as long (a memory hit 151 ns before the caches moved to
    /// their own module, 1,100 ns after, in one run of the Manager benchmarks).
    @inlinable
    package func inlinedValue(for key: CacheKey) -> Value? {
        let now = configuration.timeToLive == nil ? 0 : MonotonicClock.now()
        return unretainedShards[key.shardHash & shardMask]._withUnsafeGuaranteedRef { shard in
            shard.withLock { $0.value(for: key, now: now) }
        }
    }

    /// Whether a live entry exists for `key`, without marking it used.
    public func contains(_ key: CacheKey) -> Bool {
        inlinedContains(key)
    }

    /// ``contains(_:)`` inlined into the package's own callers, as ``inlinedValue(for:)`` is.
    @inlinable
    package func inlinedContains(_ key: CacheKey) -> Bool {
        let now = configuration.timeToLive == nil ? 0 : MonotonicClock.now()
        return unretainedShards[key.shardHash & shardMask]._withUnsafeGuaranteedRef { shard in
            shard.withLock { $0.contains(key, now: now) }
        }
    }

    /// Stores `value` under `key` with a cost in bytes, evicting least recently used entries as
    /// needed. Returns false, and removes any older entry for the key, when the cost is above
    /// ``maximumEntryCost`` or no room can be made.
    @discardableResult
    public func insert(_ value: Value, for key: CacheKey, cost: Int) -> Bool {
        let cost = max(0, cost)
        let shard = shard(for: key)
        guard cost <= maximumEntryCost else {
            let released = shard.withLock { list in
                list.noteRejection()
                return list.remove(key)
            }
            release(released.map { [$0] } ?? [])
            return false
        }
        // Concurrent inserts may hold the whole budget in reservations with nothing left to
        // evict; this value is then not kept, rather than overrunning the limits.
        guard reserve(cost: cost, startingAt: key.shardHash & shardMask) else {
            release(shard.withLock { list in list.remove(key) }.map { [$0] } ?? [])
            return false
        }
        let expiry = configuration.timeToLive.map { MonotonicClock.now() &+ max(1, MonotonicClock.nanoseconds($0)) } ?? 0
        let replaced = shard.withLock { list in list.insert(value, for: key, cost: cost, expiry: expiry) }
        release(replaced)
        return true
    }

    /// Removes the entry for `key` and returns its value.
    @discardableResult
    public func removeValue(for key: CacheKey) -> Value? {
        let removed = shard(for: key).withLock { list in list.remove(key) }
        release(removed.map { [$0] } ?? [])
        return removed?.value
    }

    /// Removes every entry.
    public func removeAll() {
        for shard in shards {
            release(shard.withLock { $0.removeAll() })
        }
    }

    /// Evicts least recently used entries until the total cost is at most `cost`.
    public func trim(toCost cost: Int) {
        evict(while: { $0.cost > max(0, cost) })
    }

    /// Evicts least recently used entries until at most `count` remain.
    public func trim(toCount count: Int) {
        evict(while: { $0.count > max(0, count) })
    }

    /// Removes every entry whose time to live has passed.
    public func removeExpired() {
        let now = MonotonicClock.now()
        for shard in shards {
            release(shard.withLock { list in list.removeAll { _, _, expiry in expiry != 0 && expiry <= now } })
        }
    }

    /// Trims the total cost to ``MemoryCacheConfiguration/pressureTrimFraction`` of what it is
    /// now. Linux sends no memory warnings: call this from whatever tells your process memory is
    /// short (a cgroup `memory.events` or PSI watcher, a signal, an admin endpoint).
    public func handleMemoryPressure() {
        trim(toCost: Int(Double(totalCost) * configuration.pressureTrimFraction))
    }

    /// The sum of the costs of the entries (and of inserts in progress, which have reserved
    /// theirs).
    public var totalCost: Int {
        reservedCost.load(ordering: .relaxed)
    }

    /// The number of entries (and of inserts in progress).
    public var count: Int {
        reservedCount.load(ordering: .relaxed)
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
        shards[key.shardHash & shardMask]
    }

    /// Claims `cost` and one place against the limits, evicting until both fit. The claim is
    /// made with compare-and-exchange, so concurrent inserts can never overshoot together.
    /// False, with nothing claimed, when every shard is empty and still there is no room.
    private func reserve(cost: Int, startingAt start: Int) -> Bool {
        while !claim(cost, in: reservedCost, limit: configuration.costLimit) {
            guard evictOldest(startingAt: start) else { return false }
        }
        while !claim(1, in: reservedCount, limit: configuration.countLimit) {
            guard evictOldest(startingAt: start) else {
                reservedCost.subtract(cost, ordering: .relaxed)
                return false
            }
        }
        return true
    }

    private func claim(_ amount: Int, in total: borrowing Atomic<Int>, limit: Int) -> Bool {
        var current = total.load(ordering: .relaxed)
        while limit == 0 || current + amount <= limit {
            let (exchanged, original) = total.compareExchange(
                expected: current, desired: current + amount, ordering: .relaxed
            )
            if exchanged { return true }
            current = original
        }
        return false
    }

    /// Evicts the oldest entry of the next non-empty shard, going round the shards; false when
    /// every shard is empty.
    private func evictOldest(startingAt start: Int) -> Bool {
        let offset = evictionCursor.add(1, ordering: .relaxed).newValue
        for step in 0..<shards.count {
            let evicted = shards[(start + offset + step) & shardMask].withLock { $0.removeOldest() }
            if let evicted {
                release([evicted])
                evictionCounter.increment()
                return true
            }
        }
        return false
    }

    private func evict(while isOver: (_ totals: (cost: Int, count: Int)) -> Bool) {
        while isOver((totalCost, count)), evictOldest(startingAt: 0) {}
    }

    /// Returns what left the shards to the shared totals. Values are dropped here, after their
    /// shard's lock: a large image's deallocation never runs under a lock.
    private func release(_ removed: [(key: CacheKey, value: Value, cost: Int)]) {
        guard !removed.isEmpty else { return }
        reservedCost.subtract(removed.reduce(0) { $0 + $1.cost }, ordering: .relaxed)
        reservedCount.subtract(removed.count, ordering: .relaxed)
    }
}
