public import Foundation
import Logging
import CoreMetrics

#if canImport(Glibc)
import Glibc
#endif

/// A directory of cached bytes with limits that hold after every write and an index that
/// survives crashes.
///
/// An entry larger than ``DiskCacheConfiguration/packedEntryLimit`` (64 KiB by default) is one
/// file, named by the SHA-256 of its key (plus the key's extension when it is 1 to 8 letters and
/// digits) in a fan-out of 256 folders named by the first two hex digits. A store writes a
/// temporary file under `tmp/`, optionally fsyncs it, and renames it into place, so no reader
/// ever sees a torn file; of two writers of one key, the last rename wins and both files were
/// whole. Smaller entries are appended, with a checksum, to segment files under `segments/`
/// (see `DiskCacheSegments.swift`): a store then creates no file, and a read checks the bytes.
///
/// The index (size, creation, last access, expiry, content type, ETag, Last-Modified, extended
/// data) lives in memory and in an append-only journal (see the journal's documentation in
/// `DiskCacheJournal.swift`). Opening replays the journal without scanning the directory; only a
/// missing or broken journal costs one scan, which recovers every entry's bytes but not its key
/// or metadata. An entry whose file is missing or has the wrong size is dropped, never served.
///
/// Limits on size, count and age (``DiskCacheConfiguration``) are enforced in every store: once a
/// limit is passed, the least recently used entries go until size and count are under the
/// low-water mark. Evicting costs no directory scan. The size limit counts what is on disk
/// (``diskUsage``): segments' bytes that no entry refers to any more count until compaction
/// copies a segment's live entries out and deletes it, which every store does as soon as the
/// limit needs it. Expired entries are dropped when read and by ``removeExpired()``.
///
/// Two processes: the first to open a directory holds an advisory lock on `lock` for as long as
/// its cache is open. A second opener gets a read-only cache (``isReadOnly``) by default: it reads
/// the entries the journal had when it opened, skips any the owner removes since, and its stores
/// throw. With ``DiskCacheConfiguration/LockPolicy/wait`` it blocks until the owner closes instead.
///
/// All methods are synchronous and thread-safe; they do small blocking file I/O, like
/// SDWebImage's `SDDiskCache`. Call them off latency-sensitive threads.
public final class DiskCache: Sendable {
    /// The cache's directory.
    public let directory: URL
    /// The limits and policies it was opened with.
    public let configuration: DiskCacheConfiguration
    /// Whether the cache can only be read: another process holds the directory, or it is not
    /// writable.
    public let isReadOnly: Bool

    private let root: String
    private let lockDescriptor: Locked<Int32>
    /// The ``DiskCacheConfiguration/readOnlyDirectories``, opened read-only at the first miss.
    private let readOnlyCaches: Locked<[DiskCache]?>
    private let state: Locked<DiskCacheState>
    private let logger: Logger
    private let removals: [String: Counter]
    private let lookups: (hit: Counter, miss: Counter)
    private let bytesWritten: Counter
    private let errors: Counter
    /// The wall clock; tests replace it to age entries without waiting.
    private let now: @Sendable () -> Date

    /// The default directory for a namespace: `$XDG_CACHE_HOME/webimage/<namespace>`, or
    /// `~/.cache/webimage/<namespace>` when `XDG_CACHE_HOME` is not set.
    public static func defaultDirectory(
        namespace: String = "default",
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> URL {
        let base =
            environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
        return base.appendingPathComponent("webimage").appendingPathComponent(namespace)
    }

    /// Opens the cache of a namespace in the default directory, creating it if needed.
    public convenience init(
        namespace: String = "default",
        configuration: DiskCacheConfiguration = DiskCacheConfiguration(),
        telemetry: Telemetry = .default
    ) throws(WebImageError) {
        try self.init(directory: Self.defaultDirectory(namespace: namespace), configuration: configuration, telemetry: telemetry)
    }

    /// Opens the cache in `directory`, creating it if needed.
    ///
    /// - Throws: `WebImageError.Code.cacheIO` when the directory can be neither created nor read.
    public convenience init(
        directory: URL,
        configuration: DiskCacheConfiguration = DiskCacheConfiguration(),
        telemetry: Telemetry = .default
    ) throws(WebImageError) {
        try self.init(directory: directory, configuration: configuration, telemetry: telemetry, now: { Date() })
    }

    /// `readOnly` opens the directory for reading only, without taking its lock or creating it.
    init(
        directory: URL,
        configuration: DiskCacheConfiguration,
        telemetry: Telemetry,
        readOnly: Bool = false,
        now: @escaping @Sendable () -> Date
    ) throws(WebImageError) {
        self.now = now
        readOnlyCaches = Locked(configuration.readOnlyDirectories.isEmpty ? [] : nil)
        self.directory = directory
        self.configuration = configuration
        root = directory.standardizedFileURL.path
        logger = telemetry.logger("cache.disk")
        removals = Dictionary(
            uniqueKeysWithValues: ["size", "count", "expired", "invalid"].map {
                ($0, telemetry.counter(.diskCacheRemovals, dimensions: [("reason", $0)]))
            })
        lookups = (
            telemetry.counter(.diskCacheLookups, dimensions: [("result", "hit")]),
            telemetry.counter(.diskCacheLookups, dimensions: [("result", "miss")])
        )
        bytesWritten = telemetry.counter(.diskCacheBytesWritten)
        errors = telemetry.counter(.diskCacheErrors)

        if !readOnly { try? FileSystem.makeDirectory(root) }
        let lock = readOnly ? nil : Self.acquireLock(root: root, policy: configuration.lockPolicy)
        lockDescriptor = Locked(lock ?? -1)
        isReadOnly = lock == nil
        var initial = DiskCacheState(segments: DiskCacheSegments(root: root, capacity: 0, writable: false))
        if isReadOnly {
            initial.index = try Self.readIndex(root: root, logger: logger)
        } else {
            initial = try Self.openWritable(root: root, configuration: configuration, logger: logger)
        }
        state = Locked(initial)
        if !isReadOnly { try? state.withLock { (state) throws(WebImageError) in try enforceLimits(&state, sparing: nil) } }
    }

    deinit {
        close()
    }

    /// Writes the batched access times and releases the journal and the directory lock. Later
    /// calls read nothing and store nothing.
    public func close() {
        state.withLock { state in
            guard !state.isClosed else { return }
            try? state.flushAccess()
            state.journal?.closeFile()
            state.journal = nil
            state.segments.closeAll()
            state.isClosed = true
        }
        lockDescriptor.withLock { descriptor in
            if descriptor >= 0 { Glibc.close(descriptor) }
            descriptor = -1
        }
    }

    // MARK: - Reading

    /// The bytes stored for `key`, or nil when there are none, they expired, or their file is
    /// gone. Searches the read-only directories after a miss. Marks the entry used.
    public func data(for key: String) throws(WebImageError) -> Data? {
        let id = FileID(key: key)
        let now = self.now()
        let found = try state.withLock { (state) throws(WebImageError) -> Lookup in
            guard !state.isClosed, let entry = state.index.peek(id) else { return .absent }
            if isExpired(entry, at: now) {
                try remove([id], reason: "expired", from: &state)
                return .absent
            }
            guard let location = entry.location else {
                try state.recordAccess(id, at: now)
                return .file(entry)
            }
            // An open segment outlives its deleted directory; a file read would find nothing.
            if state.journal?.isUnlinked == true {
                try recoverIfDirectoryVanished(&state)
                return .absent
            }
            try state.recordAccess(id, at: now)
            guard let descriptor = try state.segments.readDescriptor(for: location.segment) else {
                logger.notice("dropping entry", metadata: ["file": "\(entry.fileName)", "reason": "its segment is gone"])
                try remove([id], reason: "invalid", from: &state)
                return .absent
            }
            return .packed(entry, descriptor, state.segments.path(of: location.segment))
        }
        let data: Data?
        switch found {
        case .absent: data = try readOnlyDirectoryData(for: key)
        case .file(let entry): data = try readFile(of: entry)
        case .packed(let entry, let descriptor, let path): data = try readFrame(of: entry, through: descriptor, path: path)
        }
        (data == nil ? lookups.miss : lookups.hit).increment()
        return data
    }

    private enum Lookup {
        case absent
        case file(DiskCacheEntry)
        /// A packed entry and a descriptor of its segment to read it through, outside the lock.
        case packed(DiskCacheEntry, Int32, String)
    }

    /// The index entry for `key`, without marking it used; nil when absent or expired.
    package func entry(for key: String) -> DiskCacheEntry? {
        let id = FileID(key: key)
        let now = self.now()
        return state.withLock { state in
            state.index.peek(id).flatMap { isExpired($0, at: now) ? nil : $0 }
        }
    }

    /// The metadata stored with `key` (content type, validators, extended data).
    public func metadata(for key: String) -> DiskCacheMetadata? {
        entry(for: key)?.metadata
    }

    /// Whether a read of `key` would find nothing, told from the index alone (a lock and a
    /// lookup; no file is touched): no unexpired entry, and no read-only directories to search
    /// after it. Counted as a lookup's miss, as ``data(for:)`` counts one. A miss then needs no
    /// trip to a thread that may block on the disk.
    package func isCertainMiss(_ key: String) -> Bool {
        guard configuration.readOnlyDirectories.isEmpty, entry(for: key) == nil else { return false }
        lookups.miss.increment()
        return true
    }

    /// Whether an unexpired entry exists for `key` in this cache (the read-only directories are
    /// not searched, and the file is not opened).
    public func contains(_ key: String) -> Bool {
        entry(for: key) != nil
    }

    /// Where the file for `key` is, or would be; a packed entry (`DiskCacheEntry.isPacked`) has
    /// no file there.
    public func path(for key: String) -> URL {
        let id = FileID(key: key)
        let name = Self.fileName(for: id, key: key)
        return directory.appendingPathComponent(String(name.prefix(2))).appendingPathComponent(name)
    }

    /// Every entry, least recently used first.
    package func entries() -> [DiskCacheEntry] {
        state.withLock { $0.index.oldestFirst().map(\.value) }
    }

    /// The bytes the entries take on disk (`DiskCacheEntry.storedSize`, summed).
    public var totalSize: Int {
        state.withLock { $0.index.totalCost }
    }

    /// What the size limit counts: ``totalSize`` and the bytes in segment files that no entry
    /// refers to any more (removed or replaced packed entries, until compaction).
    public var diskUsage: Int {
        state.withLock { $0.diskUsage }
    }

    /// The number of entries.
    public var count: Int {
        state.withLock { $0.index.count }
    }

    // MARK: - Writing

    /// Stores `data` under `key`, replacing what was there, then removes least recently used
    /// entries while a limit is passed.
    ///
    /// - Throws: `WebImageError.Code.tooLarge` for data larger than the size limit (nothing is
    ///   written, and an older entry for the key is removed so it is not served stale), and
    ///   `WebImageError.Code.cacheIO` when the cache is read-only or a write fails (the
    ///   cache keeps what it had).
    public func store(_ data: Data, for key: String, metadata: DiskCacheMetadata = DiskCacheMetadata()) throws(WebImageError) {
        guard !isReadOnly else {
            throw WebImageError(.cacheIO, "the disk cache at \(root) is read-only: another process holds it, or it is not writable")
        }
        let id = FileID(key: key)
        guard configuration.sizeLimit == 0 || data.count <= configuration.sizeLimit else {
            try? remove(key)
            throw WebImageError(.tooLarge, "\(data.count) bytes is over the disk cache's \(configuration.sizeLimit)-byte limit")
        }
        let fileName = Self.fileName(for: id, key: key)
        // A packed entry's frame is appended under the lock; a file is written before it.
        let temporary = configuration.packs(data.count) ? nil : try writeTemporaryFile(data, id: id)
        do throws(WebImageError) {
            try state.withLock { (state) throws(WebImageError) in
                guard !state.isClosed else { throw WebImageError(.cacheIO, "the disk cache is closed") }
                try recoverIfDirectoryVanished(&state)
                let now = self.now()
                var entry = DiskCacheEntry(
                    key: key, fileID: id, fileName: fileName, size: data.count, created: now, lastAccess: now, metadata: metadata
                )
                entry.generation = state.nextGeneration()
                if let temporary {
                    try commit(entry, temporary: temporary, into: &state)
                } else {
                    try commitPacked(&entry, data, into: &state)
                }
            }
        } catch {
            if let temporary { try? FileSystem.unlink(temporary) }
            errors.increment()
            logger.warning("store failed", metadata: ["error": "\(error)"])
            throw error
        }
        bytesWritten.increment(by: Int64(data.count))
    }

    /// Replaces the metadata of the entry for `key`, keeping its bytes (a revalidation that
    /// found them current refreshes their freshness this way); nothing when there is no entry.
    public func updateMetadata(_ metadata: DiskCacheMetadata, for key: String) throws(WebImageError) {
        guard !isReadOnly else { return }
        let id = FileID(key: key)
        try state.withLock { (state) throws(WebImageError) in
            guard !state.isClosed, state.index.peek(id) != nil else { return }
            state.index.update(id) { $0.metadata = metadata }
            guard let updated = state.index.peek(id) else { return }
            try state.log([.update(updated)], synchronously: false)
        }
    }

    /// Removes the entry for `key`, if any.
    public func remove(_ key: String) throws(WebImageError) {
        guard !isReadOnly else { return }
        let id = FileID(key: key)
        try state.withLock { (state) throws(WebImageError) in
            guard state.index.peek(id) != nil else { return }
            try remove([id], reason: nil, from: &state)
            try reclaimSegments(&state)
        }
    }

    /// Removes every entry.
    public func removeAll() throws(WebImageError) {
        guard !isReadOnly else { return }
        try state.withLock { (state) throws(WebImageError) in
            try state.log([.clear], synchronously: configuration.synchronousWrites)
            state.index = LRUList()
            state.segments.removeAll()
            Self.removeEntryFiles(root: root)
            try state.journal?.reset()
        }
    }

    /// Removes every entry whose expiry date or age limit has passed.
    public func removeExpired() throws(WebImageError) {
        guard !isReadOnly else { return }
        let now = self.now()
        try state.withLock { (state) throws(WebImageError) in
            let expired = state.index.oldestFirst().filter { isExpired($0.value, at: now) }.map(\.key)
            guard !expired.isEmpty else { return }
            try remove(expired, reason: "expired", from: &state)
            try reclaimSegments(&state)
        }
    }

    /// Writes the batched access times to the journal now.
    public func flush() throws(WebImageError) {
        try state.withLock { (state) throws(WebImageError) in try state.flushAccess() }
    }

    // MARK: - Internals

    private func commit(_ entry: DiskCacheEntry, temporary: String, into state: inout DiskCacheState) throws(WebImageError) {
        let sync = configuration.synchronousWrites
        let destination = filePath(entry)
        try state.log([.begin(entry)], synchronously: sync)
        do throws(WebImageError) {
            try renameCreatingFolder(temporary, destination)
            try state.log([.commit(entry.fileID)], synchronously: sync)
        } catch {
            // The begin record stays uncommitted: the next open deletes whatever is at the
            // destination, and the old entry (if any) must not be served in the meantime.
            try? FileSystem.unlink(destination)
            _ = state.removeEntry(entry.fileID)
            throw error
        }
        _ = state.removeEntry(entry.fileID)
        _ = state.index.insert(entry, for: entry.fileID, cost: entry.storedSize)
        try enforceLimits(&state, sparing: entry.fileID)
        try state.compactIfNeeded(threshold: configuration.compactionThreshold, synchronously: sync)
    }

    /// Appends the frame, then logs the entry: a crash between leaves waste, never an entry
    /// without its bytes. A previous version stored as a file is removed first.
    private func commitPacked(_ entry: inout DiskCacheEntry, _ data: Data, into state: inout DiskCacheState) throws(WebImageError) {
        let sync = configuration.synchronousWrites
        if let previous = state.index.peek(entry.fileID), !previous.isPacked { try remove([entry.fileID], reason: nil, from: &state) }
        let location = try state.segments.append(data, id: entry.fileID, synchronously: sync)
        entry.location = location
        do throws(WebImageError) {
            try state.log([.entry(entry)], synchronously: sync)
        } catch {
            state.segments.release(location, size: data.count, markDead: true)
            throw error
        }
        _ = state.removeEntry(entry.fileID)
        _ = state.index.insert(entry, for: entry.fileID, cost: entry.storedSize)
        try enforceLimits(&state, sparing: entry.fileID)
        try state.compactIfNeeded(threshold: configuration.compactionThreshold, synchronously: sync)
    }

    private func enforceLimits(_ state: inout DiskCacheState, sparing spared: FileID?) throws(WebImageError) {
        let sizeLimit = configuration.sizeLimit
        let countLimit = configuration.countLimit
        let overSize = sizeLimit > 0 && state.index.totalCost > sizeLimit
        let overCount = countLimit > 0 && state.index.count > countLimit
        guard overSize || overCount else { return try reclaimSegments(&state) }
        let lowWater = configuration.lowWaterFraction
        let evicted = state.index.evict(
            downToCost: sizeLimit > 0 ? Int(Double(sizeLimit) * lowWater) : .max,
            count: countLimit > 0 ? Int(Double(countLimit) * lowWater) : .max,
            sparing: spared
        )
        // The entries are already out of the index; log their removal, then delete the files.
        try state.log(evicted.map { .delete($0.key) }, synchronously: configuration.synchronousWrites)
        for evictedEntry in evicted {
            if evictedEntry.value.isPacked {
                state.releaseFrame(of: evictedEntry.value)
            } else {
                unlinkQuietly(filePath(evictedEntry.value))
            }
        }
        removals[overSize ? "size" : "count"]?.increment(by: Int64(evicted.count))
        try reclaimSegments(&state)
    }

    /// Compacts segments while their waste puts the cache over its size limit, and any sealed
    /// segment that is half waste.
    private func reclaimSegments(_ state: inout DiskCacheState) throws(WebImageError) {
        let limit = configuration.sizeLimit
        while let number = state.segments.segmentToCompact(overLimit: limit > 0 && state.diskUsage > limit) {
            try compactSegment(number, &state)
        }
    }

    /// Copies a segment's live frames to the active segment, logs their new places, and deletes
    /// the segment. A crash before the log leaves the copies as waste; after it, the old file is
    /// deleted at the next open, for no entry refers to it.
    private func compactSegment(_ number: UInt32, _ state: inout DiskCacheState) throws(WebImageError) {
        if number == state.segments.active { state.segments.sealActive() }
        let (bytes, frames) = try state.segments.liveFrames(of: number)
        let kept = frames.filter { frame in
            state.index.peek(frame.id)?.location == PackedLocation(segment: number, offset: frame.offset, checksum: frame.checksum)
        }
        let keptBytes = kept.reduce(0) { $0 + $1.frameSize }
        if keptBytes != state.segments.segments[number]?.live {
            // The file lost frames the index has (damaged by hand): those entries cannot move.
            let lost = state.index.oldestFirst().filter { $0.value.location?.segment == number }.map(\.key)
                .filter { id in !kept.contains { $0.id == id } }
            try remove(lost, reason: "invalid", from: &state)
        }
        let locations = try state.segments.copy(kept, from: bytes, synchronously: configuration.synchronousWrites)
        var moved: [DiskCacheEntry] = []
        for (frame, location) in zip(kept, locations) {
            guard var entry = state.index.peek(frame.id) else { continue }
            entry.location = location
            moved.append(entry)
        }
        do throws(WebImageError) {
            try state.log(moved.map { .update($0) }, synchronously: configuration.synchronousWrites)
        } catch {
            for entry in moved { state.segments.release(entry.location!, size: entry.size, markDead: false) }
            throw error
        }
        for entry in moved { state.index.update(entry.fileID) { $0.location = entry.location } }
        state.segments.remove(number)
    }

    private func remove(_ ids: [FileID], reason: String?, from state: inout DiskCacheState) throws(WebImageError) {
        let entries = ids.compactMap { state.index.peek($0) }
        if state.journal != nil {
            try state.log(ids.map { .delete($0) }, synchronously: configuration.synchronousWrites)
            for entry in entries where !entry.isPacked { unlinkQuietly(filePath(entry)) }
        }
        for id in ids { _ = state.removeEntry(id) }
        if let reason { removals[reason]?.increment(by: Int64(entries.count)) }
    }

    private func readFile(of entry: DiskCacheEntry) throws(WebImageError) -> Data? {
        let path = filePath(entry)
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            guard errno == ENOENT else {
                errors.increment()
                throw FileSystem.error("open", path)
            }
            dropInvalid(entry, reason: "its file is missing")
            return nil
        }
        defer { Glibc.close(descriptor) }
        guard try FileSystem.size(of: descriptor, path: path) == entry.size,
            let data = try FileSystem.read(descriptor, count: entry.size, path: path)
        else {
            dropInvalid(entry, reason: "its file has the wrong size")
            return nil
        }
        return data
    }

    private func readFrame(of entry: DiskCacheEntry, through descriptor: Int32, path: String) throws(WebImageError) -> Data? {
        defer { Glibc.close(descriptor) }
        guard let location = entry.location,
            let data = try DiskCacheSegments.readFrame(descriptor, at: location, id: entry.fileID, size: entry.size, path: path)
        else {
            dropInvalid(entry, reason: "its frame is cut short, marked dead or damaged")
            return nil
        }
        return data
    }

    /// Drops an entry that failed verification, unless a newer store replaced it meanwhile.
    private func dropInvalid(_ entry: DiskCacheEntry, reason: String) {
        logger.notice("dropping entry", metadata: ["file": "\(entry.fileName)", "reason": "\(reason)"])
        state.withLock { state in
            guard state.index.peek(entry.fileID)?.generation == entry.generation else { return }
            try? remove([entry.fileID], reason: "invalid", from: &state)
        }
    }

    /// Searches the read-only directories, each opened as a read-only cache at the first miss
    /// (a directory without a journal is scanned once).
    private func readOnlyDirectoryData(for key: String) throws(WebImageError) -> Data? {
        let caches = readOnlyCaches.withLock { caches in
            if caches == nil {
                let quiet = Telemetry(metricsFactory: NOOPMetricsHandler.instance)
                caches = configuration.readOnlyDirectories.compactMap { directory in
                    try? DiskCache(
                        directory: directory, configuration: DiskCacheConfiguration(sizeLimit: 0, maximumAge: nil),
                        telemetry: quiet, readOnly: true, now: now)
                }
            }
            return caches ?? []
        }
        for cache in caches {
            if let data = try cache.data(for: key) { return data }
        }
        return nil
    }

    private func writeTemporaryFile(_ data: Data, id: FileID) throws(WebImageError) -> String {
        let folder = root + "/tmp"
        let path = folder + "/" + id.hex + "." + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        let descriptor = try FileSystem.create(path, in: folder, O_WRONLY | O_EXCL)
        defer { Glibc.close(descriptor) }
        do throws(WebImageError) {
            try data.withTypedBytes { bytes throws(WebImageError) in try FileSystem.writeAll(descriptor, bytes, path: path) }
            if configuration.synchronousWrites { try FileSystem.sync(descriptor, path: path) }
        } catch {
            try? FileSystem.unlink(path)
            errors.increment()
            throw error
        }
        return path
    }

    private func renameCreatingFolder(_ source: String, _ destination: String) throws(WebImageError) {
        do throws(WebImageError) {
            try FileSystem.rename(source, destination)
        } catch {
            guard (error.underlyingError as? POSIXError)?.code == .ENOENT else { throw error }
            try FileSystem.makeDirectory((destination as NSString).deletingLastPathComponent)
            try FileSystem.rename(source, destination)
        }
    }

    /// A deleted cache directory (by a user, or `rm -rf ~/.cache`) took every file with it:
    /// start over with an empty index and a new journal.
    private func recoverIfDirectoryVanished(_ state: inout DiskCacheState) throws(WebImageError) {
        guard let journal = state.journal, journal.isUnlinked else { return }
        logger.notice("the cache directory was deleted; starting empty", metadata: ["directory": "\(root)"])
        journal.closeFile()
        state.segments.closeAll()
        try FileSystem.makeDirectory(root)
        state = try Self.openWritable(root: root, configuration: configuration, logger: logger, clearTemporaryFiles: false)
        if let lock = Self.acquireLock(root: root, policy: .readOnly) {
            lockDescriptor.withLock { descriptor in
                if descriptor >= 0 { Glibc.close(descriptor) }
                descriptor = lock
            }
        }
    }

    private func isExpired(_ entry: DiskCacheEntry, at now: Date) -> Bool {
        if let expires = entry.metadata.expires, expires <= now { return true }
        guard let maximumAge = configuration.maximumAge else { return false }
        let reference = configuration.agePolicy == .sinceLastAccess ? entry.lastAccess : entry.created
        let seconds = Double(maximumAge.components.seconds) + Double(maximumAge.components.attoseconds) / 1e18
        return now.timeIntervalSince(reference) > seconds
    }

    private func filePath(_ entry: DiskCacheEntry) -> String {
        root + "/" + entry.folderName + "/" + entry.fileName
    }

    private func unlinkQuietly(_ path: String) {
        do throws(WebImageError) {
            try FileSystem.unlink(path)
        } catch {
            errors.increment()
            logger.warning("could not delete a cache file", metadata: ["error": "\(error)"])
        }
    }
}
