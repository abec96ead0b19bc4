/// Entries in recency order with costs: one shard of a ``MemoryCache``, and the index of a
/// ``DiskCache``. A dictionary points into a slab of entries threaded on a doubly linked list;
/// indices instead of node objects keep a hit free of allocation and of reference counting.
/// Limits are the owner's business: it evicts with ``removeOldest()`` or ``evict(downToCost:count:sparing:)``.
// The read path (`value(for:now:)`, `contains`) is inlinable: a memory cache hit from another
// module then runs specialized for its key and value types instead of through generic
// witnesses, which measured several times slower.
@usableFromInline
struct LRUList<Key: Hashable, Value> {
    @usableFromInline
    struct Slot {
        @usableFromInline var key: Key?
        @usableFromInline var value: Value?
        @usableFromInline var cost = 0
        /// Monotonic nanoseconds after which the entry is expired; 0 for never.
        @usableFromInline var expiry: UInt64 = 0
        @usableFromInline var newer: Int32 = -1
        @usableFromInline var older: Int32 = -1
    }

    @usableFromInline var slots: ContiguousArray<Slot> = []
    @usableFromInline var index: [Key: Int32] = [:]
    private var freeSlots: [Int32] = []
    @usableFromInline var newest: Int32 = -1
    @usableFromInline var oldest: Int32 = -1
    private(set) var totalCost = 0
    @usableFromInline var statistics = MemoryCacheStatistics()

    var count: Int { index.count }

    @usableFromInline init() {}

    /// `now` is the monotonic time in nanoseconds, or 0 when entries never expire.
    @inlinable
    mutating func value(for key: Key, now: UInt64) -> Value? {
        guard let slot = index[key] else {
            statistics.misses += 1
            return nil
        }
        if now != 0, slots[Int(slot)].expiry != 0, slots[Int(slot)].expiry <= now {
            statistics.misses += 1
            return nil
        }
        statistics.hits += 1
        moveToNewest(slot)
        return slots[Int(slot)].value
    }

    @inlinable
    func contains(_ key: Key, now: UInt64) -> Bool {
        guard let slot = index[key] else { return false }
        let expiry = slots[Int(slot)].expiry
        return now == 0 || expiry == 0 || expiry > now
    }

    /// Stores the value as the most recently used. Returns the value it replaced, with its cost,
    /// so the caller can release it after the lock.
    mutating func insert(_ value: Value, for key: Key, cost: Int, expiry: UInt64 = 0) -> [(key: Key, value: Value, cost: Int)] {
        statistics.insertions += 1
        var released: [(key: Key, value: Value, cost: Int)] = []
        if let slot = index[key] {
            if let old = slots[Int(slot)].value { released.append((key, old, slots[Int(slot)].cost)) }
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
        return released
    }

    mutating func noteRejection() {
        statistics.rejections += 1
    }

    /// Removes the least recently used entry.
    mutating func removeOldest() -> (key: Key, value: Value, cost: Int)? {
        guard oldest >= 0, let key = slots[Int(oldest)].key else { return nil }
        statistics.evictions += 1
        let cost = slots[Int(oldest)].cost
        guard let value = release(oldest) else { return nil }
        return (key, value, cost)
    }

    mutating func remove(_ key: Key) -> (key: Key, value: Value, cost: Int)? {
        guard let slot = index[key] else { return nil }
        let cost = slots[Int(slot)].cost
        return release(slot).map { (key, $0, cost) }
    }

    mutating func removeAll() -> [(key: Key, value: Value, cost: Int)] {
        let removed = slots.compactMap { slot in slot.key.flatMap { key in slot.value.map { (key, $0, slot.cost) } } }
        self = LRUList(statistics: statistics)
        return removed
    }

    /// Evicts from the old end until both the cost and the count are within the given bounds,
    /// never evicting `spared` (the entry just stored, which may alone be above a low-water mark).
    mutating func evict(downToCost cost: Int, count maximumCount: Int, sparing spared: Key? = nil) -> [(key: Key, value: Value, cost: Int)]
    {
        var evicted: [(key: Key, value: Value, cost: Int)] = []
        while oldest >= 0 && (totalCost > cost || index.count > maximumCount) {
            if let spared, slots[Int(oldest)].key == spared { break }
            guard let removed = removeOldest() else { break }
            evicted.append(removed)
        }
        return evicted
    }

    /// Removes the entries for which `isExpired` holds, oldest first; stops early once
    /// `stopAtFirstLive` is set and a live entry is met (for ages counted from last use, which
    /// grow towards the old end).
    mutating func removeAll(
        stopAtFirstLive: Bool = false,
        where isExpired: (Key, Value, UInt64) -> Bool
    ) -> [(key: Key, value: Value, cost: Int)] {
        var removed: [(key: Key, value: Value, cost: Int)] = []
        var slot = oldest
        while slot >= 0 {
            let entry = slots[Int(slot)]
            let newer = entry.newer
            if let key = entry.key, let value = entry.value {
                if isExpired(key, value, entry.expiry) {
                    _ = release(slot)
                    removed.append((key, value, entry.cost))
                } else if stopAtFirstLive {
                    break
                }
            }
            slot = newer
        }
        return removed
    }

    /// The value for `key` without marking it used.
    func peek(_ key: Key) -> Value? {
        index[key].flatMap { slots[Int($0)].value }
    }

    /// Replaces the value of an existing entry in place, keeping its place and cost.
    mutating func update(_ key: Key, _ change: (inout Value) -> Void) {
        guard let slot = index[key], var value = slots[Int(slot)].value else { return }
        slots[Int(slot)].value = nil
        change(&value)
        slots[Int(slot)].value = value
    }

    /// Marks the entry most recently used.
    mutating func touch(_ key: Key) {
        if let slot = index[key] { moveToNewest(slot) }
    }

    /// The entries from least to most recently used.
    /// Calls `body` with every value, in no particular order, copying none of them.
    func forEachValue(_ body: (Value) -> Void) {
        for slot in slots { if slot.key != nil, let value = slot.value { body(value) } }
    }

    func oldestFirst() -> [(key: Key, value: Value)] {
        var result: [(key: Key, value: Value)] = []
        result.reserveCapacity(index.count)
        var slot = oldest
        while slot >= 0 {
            if let key = slots[Int(slot)].key, let value = slots[Int(slot)].value { result.append((key, value)) }
            slot = slots[Int(slot)].newer
        }
        return result
    }

    private init(statistics: MemoryCacheStatistics) {
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

    @inlinable
    mutating func moveToNewest(_ slot: Int32) {
        guard slot != newest else { return }
        unlink(slot)
        link(slot)
    }

    @inlinable
    mutating func link(_ slot: Int32) {
        slots[Int(slot)].older = newest
        slots[Int(slot)].newer = -1
        if newest >= 0 { slots[Int(newest)].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }

    @inlinable
    mutating func unlink(_ slot: Int32) {
        let older = slots[Int(slot)].older
        let newer = slots[Int(slot)].newer
        if older >= 0 { slots[Int(older)].newer = newer } else { oldest = newer }
        if newer >= 0 { slots[Int(newer)].older = older } else { newest = older }
        slots[Int(slot)].older = -1
        slots[Int(slot)].newer = -1
    }
}
