package import Foundation

/// One entry of a ``DiskCache``, as its index knows it.
package struct DiskCacheEntry: Sendable, Equatable {
    /// The key the entry was stored under; nil for an entry recovered by a directory scan after
    /// the journal was lost (its data is still found by key).
    public let key: String?
    /// The size of the entry's bytes.
    public let size: Int
    /// When the entry was written.
    public let created: Date
    /// When the entry was last read or written.
    public internal(set) var lastAccess: Date
    /// The HTTP facts and extended data stored with the entry.
    public internal(set) var metadata: DiskCacheMetadata
    /// The file's name inside its fan-out folder: the SHA-256 of the key in hex, with the key's
    /// extension when it is short and safe. A packed entry has no file of its own.
    public var fileName: String {
        fileExtension.map { fileID.hex + "." + $0 } ?? fileID.hex
    }

    let fileID: FileID
    /// Kept instead of the whole name: at most 8 characters, which a `String` holds without an
    /// allocation; the 64 hex digits come from the ID. The index of a 100,000-entry cache is
    /// about 10 MB smaller for it.
    private let fileExtension: String?
    /// Where a packed entry's frame is; nil for an entry stored as a file of its own.
    var location: PackedLocation?
    /// Tells a replaced entry from its successor; not persisted.
    var generation = 0

    /// Whether the entry is packed into a segment file with other small entries rather than
    /// stored as a file of its own (see ``DiskCacheConfiguration/packedEntryLimit``).
    public var isPacked: Bool { location != nil }

    /// The bytes the entry takes on disk: its file, or its frame in a segment (its bytes and a
    /// 44-byte header). What the size limit counts.
    public var storedSize: Int { location == nil ? size : size + DiskCacheSegments.headerSize }

    init(key: String?, fileID: FileID, fileName: String, size: Int, created: Date, lastAccess: Date, metadata: DiskCacheMetadata) {
        self.key = key
        self.fileID = fileID
        fileExtension = fileName.count > 65 ? String(fileName.dropFirst(65)) : nil
        self.size = size
        self.created = created
        self.lastAccess = lastAccess
        self.metadata = metadata
    }

    /// The fan-out folder: the first two hex digits of the file name.
    public var folderName: String { String(fileName.prefix(2)) }

    public static func == (lhs: DiskCacheEntry, rhs: DiskCacheEntry) -> Bool {
        lhs.key == rhs.key && lhs.fileID == rhs.fileID && lhs.fileExtension == rhs.fileExtension && lhs.size == rhs.size
            && lhs.created == rhs.created
            && lhs.lastAccess == rhs.lastAccess && lhs.metadata == rhs.metadata
    }
}
