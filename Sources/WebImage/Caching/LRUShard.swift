/// One shard of a ``MemoryCache``: a dictionary into a slab of entries threaded on a doubly
/// linked list in recency order. Indices instead of node objects keep a hit free of allocation
/// and of reference counting on the list.
struct LRUShard<Value> {
    private struct Slot {
        var key: CacheKey?
        var value: Value?
        var cost = 0
        var expiry: ContinuousClock.Instant?
        var newer: Int32 = -1
        var older: Int32 = -1
    }

    private var slots: ContiguousArray<Slot> = []
    private var index: [CacheKey: Int32] = [:]
    private var freeSlots: [Int32] = []
    private var newest: Int32 = -1
    private var oldest: Int32 = -1
    private let costLimit: Int
    private let countLimit: Int
    private(set) var totalCost = 0
    private(set) var statistics = MemoryCacheStatistics()

    var count: Int { index.count }

    init(costLimit: Int, countLimit: Int) {
        self.costLimit = costLimit
        self.countLimit = countLimit
    }

    mutating func value(for key: CacheKey, now: ContinuousClock.Instant?) -> Value? {
        guard let slot = index[key] else {
            statistics.misses += 1
            return nil
        }
        if let now, let expiry = slots[Int(slot)].expiry, expiry <= now {
            statistics.misses += 1
            return nil
        }
        statistics.hits += 1
        moveToNewest(slot)
        return slots[Int(slot)].value
    }

    func contains(_ key: CacheKey, now: ContinuousClock.Instant?) -> Bool {
        guard let slot = index[key] else { return false }
        guard let now, let expiry = slots[Int(slot)].expiry else { return true }
        return expiry > now
    }

    /// Stores the value and evicts down to the limits; returns the evicted values so the caller
    /// releases them after the lock.
    mutating func insert(_ value: Value, for key: CacheKey, cost: Int, expiry: ContinuousClock.Instant?) -> [Value] {
        statistics.insertions += 1
        var released: [Value] = []
        if let slot = index[key] {
            if let old = slots[Int(slot)].value { released.append(old) }
            totalCost += cost - slots[Int(slot)].cost
            slots[Int(slot)].value = value
            slots[Int(slot)].cost = cost
            slots[Int(slot)].expiry = expiry
            moveToNewest(slot)
        } else {
            let slot = allocate(Slot(key: key, value: value, cost: cost, expiry: expiry))
            index[key] = slot
            totalCost += cost
            link(slot)
        }
        let evicted = evict(
            downToCost: costLimit == 0 ? .max : costLimit,
            count: countLimit == 0 ? .max : countLimit
        )
        return released + evicted
    }

    mutating func reject(_ key: CacheKey) -> Value? {
        statistics.rejections += 1
        return remove(key)
    }

    mutating func remove(_ key: CacheKey) -> Value? {
        guard let slot = index[key] else { return nil }
        return release(slot)
    }

    mutating func removeAll() -> [Value] {
        let values = slots.compactMap(\.value)
        self = LRUShard(costLimit: costLimit, countLimit: countLimit, statistics: statistics)
        return values
    }

    /// Evicts from the old end until both the cost and the count are within the given bounds.
    mutating func evict(downToCost cost: Int, count maximumCount: Int) -> [Value] {
        var evicted: [Value] = []
        while oldest >= 0 && (totalCost > cost || index.count > maximumCount) {
            statistics.evictions += 1
            if let value = release(oldest) { evicted.append(value) }
        }
        return evicted
    }

    mutating func removeExpired(now: ContinuousClock.Instant) -> [Value] {
        var removed: [Value] = []
        var slot = oldest
        while slot >= 0 {
            let newer = slots[Int(slot)].newer
            if let expiry = slots[Int(slot)].expiry, expiry <= now, let value = release(slot) {
                removed.append(value)
            }
            slot = newer
        }
        return removed
    }

    private init(costLimit: Int, countLimit: Int, statistics: MemoryCacheStatistics) {
        self.init(costLimit: costLimit, countLimit: countLimit)
        self.statistics = statistics
    }

    private mutating func allocate(_ entry: Slot) -> Int32 {
        if let slot = freeSlots.popLast() {
            slots[Int(slot)] = entry
            return slot
        }
        slots.append(entry)
        return Int32(slots.count - 1)
    }

    private mutating func release(_ slot: Int32) -> Value? {
        unlink(slot)
        let entry = slots[Int(slot)]
        if let key = entry.key { index.removeValue(forKey: key) }
        totalCost -= entry.cost
        slots[Int(slot)] = Slot()
        freeSlots.append(slot)
        return entry.value
    }

    private mutating func moveToNewest(_ slot: Int32) {
        guard slot != newest else { return }
        unlink(slot)
        link(slot)
    }

    private mutating func link(_ slot: Int32) {
        slots[Int(slot)].older = newest
        slots[Int(slot)].newer = -1
        if newest >= 0 { slots[Int(newest)].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }

    private mutating func unlink(_ slot: Int32) {
        let older = slots[Int(slot)].older
        let newer = slots[Int(slot)].newer
        if older >= 0 { slots[Int(older)].newer = newer } else { oldest = newer }
        if newer >= 0 { slots[Int(newer)].older = older } else { newest = older }
        slots[Int(slot)].older = -1
        slots[Int(slot)].newer = -1
    }
}
