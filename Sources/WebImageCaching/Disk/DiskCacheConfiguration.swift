public import Foundation

/// Limits and policies of a ``DiskCache``.
public struct DiskCacheConfiguration: Sendable {
    /// What an entry's age is counted from.
    public enum AgePolicy: Sendable {
        /// From the last read or write (SDWebImage 5's access-date expiry).
        case sinceLastAccess
        /// From the write.
        case sinceCreation
    }

    /// What opening a directory that another process holds does.
    public enum LockPolicy: Sendable {
        /// Open read-only: reads work from the journal as it was at open, stores throw
        /// `WebImageError.Code.cacheIO`.
        case readOnly
        /// Block until the other process closes the cache.
        case wait
    }

    /// The bytes the cache may take on disk: the entries' files, and the segment files of packed
    /// entries with their waste (``DiskCache/diskUsage``); 0 means no limit. Default 512 MiB.
    public var sizeLimit: Int
    /// The number of entries allowed; 0 means no limit. Default 0.
    public var countLimit: Int
    /// How old an entry may get; nil means no age limit. Default one week.
    public var maximumAge: Duration?
    /// What the age counts from. Default ``AgePolicy/sinceLastAccess``.
    public var agePolicy: AgePolicy
    /// Once a limit is passed, entries go until size and count are under this fraction of their
    /// limits. Default 0.8.
    public var lowWaterFraction: Double
    /// fsync each entry and the journal before a store returns. Default false: a crash can then
    /// lose the last stores, but never serves a torn entry.
    public var synchronousWrites: Bool
    /// Directories of other disk caches searched, read-only, when this one misses
    /// (SDWebImage's `addReadOnlyCachePath`).
    public var readOnlyDirectories: [URL]
    /// What happens when another process holds the directory. Default ``LockPolicy/readOnly``.
    public var lockPolicy: LockPolicy
    /// The journal is compacted once it holds more than twice as many records as live entries,
    /// and at least this many. Default 1,000.
    public var compactionThreshold: Int
    /// Entries of at most this many bytes are packed into shared segment files instead of a file
    /// each; 0 stores every entry as a file. Default 64 KiB. Creating a file costs more than
    /// writing the bytes well past the 32 KiB where Python `diskcache` stops keeping values in its
    /// database (`webimage prefetch` of 10,000 50 KB JPEGs: 2,147 a second with a file each, 5,227
    /// packed); past 64 KiB the CRC-32 a packed read checks costs more than a file's open (a warm
    /// read of 256 KB: 13 µs from a file, 211 µs packed). Capped at a quarter of a segment.
    public var packedEntryLimit: Int

    /// Creates a configuration; the defaults follow SDWebImage where it has one.
    public init(
        sizeLimit: Int = 512 * 1024 * 1024,
        countLimit: Int = 0,
        maximumAge: Duration? = .seconds(7 * 24 * 3600),
        agePolicy: AgePolicy = .sinceLastAccess,
        lowWaterFraction: Double = 0.8,
        synchronousWrites: Bool = false,
        readOnlyDirectories: [URL] = [],
        lockPolicy: LockPolicy = .readOnly,
        compactionThreshold: Int = 1000,
        packedEntryLimit: Int = 64 * 1024
    ) {
        self.sizeLimit = sizeLimit
        self.countLimit = countLimit
        self.maximumAge = maximumAge
        self.agePolicy = agePolicy
        self.lowWaterFraction = lowWaterFraction
        self.synchronousWrites = synchronousWrites
        self.readOnlyDirectories = readOnlyDirectories
        self.lockPolicy = lockPolicy
        self.compactionThreshold = compactionThreshold
        self.packedEntryLimit = packedEntryLimit
    }

    /// Whether an entry of `size` bytes is packed.
    func packs(_ size: Int) -> Bool {
        packedEntryLimit > 0 && size <= min(packedEntryLimit, DiskCacheSegments.capacity(forSizeLimit: sizeLimit) / 4)
    }
}
