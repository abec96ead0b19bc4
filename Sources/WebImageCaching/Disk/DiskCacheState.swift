import Foundation

/// What a ``DiskCache`` keeps behind its lock: the index, the journal, and the access records not
/// yet written. Every method runs with the lock held.
struct DiskCacheState {
    /// Access records are written in batches of about this many bytes, or before the next store.
    static let accessBufferLimit = 16 * 1024

    var index = LRUList<FileID, DiskCacheEntry>()
    /// Nil for a read-only cache.
    var journal: DiskCacheJournal?
    var segments: DiskCacheSegments
    var pendingAccess: [UInt8] = []
    var pendingAccessCount = 0
    var generation = 0
    var isClosed = false

    init(segments: DiskCacheSegments) {
        self.segments = segments
    }

    /// What the size limit counts: the entries' stored bytes and the segments' waste.
    var diskUsage: Int { index.totalCost + segments.waste }

    /// Takes an entry out of the index; a packed entry's frame becomes waste, marked dead when
    /// the cache is writable (its removal is logged by then).
    mutating func removeEntry(_ id: FileID) -> DiskCacheEntry? {
        guard let removed = index.remove(id)?.value else { return nil }
        releaseFrame(of: removed)
        return removed
    }

    /// A packed entry left the index some other way (eviction): its frame becomes waste.
    mutating func releaseFrame(of entry: DiskCacheEntry) {
        guard let location = entry.location else { return }
        segments.release(location, size: entry.size, markDead: journal != nil)
    }

    mutating func nextGeneration() -> Int {
        generation += 1
        return generation
    }

    /// Marks an entry used now, and logs it (in a batch) when the journal is writable.
    mutating func recordAccess(_ id: FileID, at date: Date) throws(WebImageError) {
        index.update(id) { $0.lastAccess = date }
        index.touch(id)
        guard journal != nil else { return }
        DiskCacheJournal.encode(.access(id, date), into: &pendingAccess)
        pendingAccessCount += 1
        if pendingAccess.count >= Self.accessBufferLimit { try flushAccess() }
    }

    /// Writes the batched access records.
    mutating func flushAccess() throws(WebImageError) {
        guard !pendingAccess.isEmpty, journal != nil else { return }
        let records = pendingAccess
        let count = pendingAccessCount
        pendingAccess = []
        pendingAccessCount = 0
        try journal?.append(records, count: count, synchronously: false)
    }

    /// Appends records after any batched access records, in one write.
    mutating func log(_ records: [DiskCacheJournal.Record], synchronously: Bool) throws(WebImageError) {
        var bytes = pendingAccess
        for record in records { DiskCacheJournal.encode(record, into: &bytes) }
        let count = pendingAccessCount + records.count
        pendingAccess = []
        pendingAccessCount = 0
        try journal?.append(bytes, count: count, synchronously: synchronously)
    }

    /// Rewrites the journal once it holds more than twice the live entries (and at least
    /// `threshold` records).
    mutating func compactIfNeeded(threshold: Int, synchronously: Bool) throws(WebImageError) {
        guard let journal, journal.recordCount > max(threshold, 2 * index.count) else { return }
        try flushAccess()
        try self.journal?.compact(index.oldestFirst().map(\.value), synchronously: synchronously)
    }
}
