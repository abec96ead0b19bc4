import CZlib
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The append-only log behind a ``DiskCache``'s index.
///
/// The file starts with an 8-byte magic. Each record is framed as
/// `[u32 payload length][payload][u32 CRC-32 of the payload]`, little-endian, and its payload
/// starts with a type byte:
///
/// - `B` begin: an entry about to be renamed into place (all its fields);
/// - `C` commit: the rename of the last `B` for that file succeeded;
/// - `A` access: the entry was read at a time;
/// - `D` delete: the entry is gone;
/// - `E` entry: a committed entry, as compaction writes it;
/// - `P` packed entry: an entry whose frame is in a segment, with its location (written after
///   the frame, for a store, and by compaction);
/// - `U` update: an entry's metadata or frame location changed; its place in the order does not;
/// - `X` clear: every entry is gone.
///
/// Replaying applies the records in order. A `B` without its `C` is a store that a crash
/// interrupted: opening looks at the file to tell whether the rename happened, and keeps the
/// entry, new or previous, that matches it (or neither, deleting the file). Deletes (and a clear) at the end of the journal, after its last store, may
/// have been logged by an operation a crash stopped before it unlinked the files: opening unlinks
/// them again. A record cut off at the end of the file is a torn append and is cut away; a
/// record whose checksum fails anywhere else makes the journal broken, and the cache rebuilds it
/// from one directory scan.
struct DiskCacheJournal {
    static let magic: [UInt8] = Array("WIJRNL01".utf8)
    static let maximumRecordSize = 64 * 1024 * 1024

    enum Record {
        case begin(DiskCacheEntry)
        case commit(FileID)
        case access(FileID, Date)
        case delete(FileID)
        /// `E`, or `P` for a packed entry.
        case entry(DiskCacheEntry)
        case update(DiskCacheEntry)
        case clear
    }

    /// What replaying a journal produced.
    struct Replay {
        /// Committed entries, least recently used first.
        var entries = LRUList<FileID, DiskCacheEntry>()
        /// Stores that began and never committed.
        var uncommitted: [FileID: DiskCacheEntry] = [:]
        /// The length of the valid prefix; anything after it is a torn append.
        var validLength = 0
        /// How many records were applied.
        var recordCount = 0
        /// Files deleted by the records after the last store: their unlinks may not have happened.
        var trailingDeletes: [FileID] = []
        /// Whether a clear follows the last store: its directory removal may not have finished.
        var trailingClear = false
    }

    struct Broken: Error {
        let reason: String
    }

    let path: String
    private(set) var descriptor: Int32
    private(set) var length: Int
    private(set) var recordCount: Int

    /// Opens (creating if needed) the journal for appending and replays it.
    static func open(path: String) throws(WebImageError) -> (journal: DiskCacheJournal, replay: Result<Replay, Broken>) {
        let descriptor = try FileSystem.open(path, O_RDWR | O_CREAT)
        do throws(WebImageError) {
            let size = try FileSystem.size(of: descriptor, path: path)
            guard size > 0 else {
                var journal = DiskCacheJournal(path: path, descriptor: descriptor, length: 0, recordCount: 0)
                try journal.writeMagic()
                return (journal, .failure(Broken(reason: "the journal is new or empty")))
            }
            guard let data = try FileSystem.read(descriptor, count: size, path: path) else {
                throw FileSystem.error("read", path, errno: EIO)
            }
            let replay = data.withUnsafeBytes { replayRecords($0) }
            var journal = DiskCacheJournal(path: path, descriptor: descriptor, length: size, recordCount: 0)
            if case .success(let result) = replay {
                journal.recordCount = result.recordCount
                if result.validLength < size { try journal.truncate(to: result.validLength) }
            }
            _ = lseek(descriptor, 0, SEEK_END)
            return (journal, replay)
        } catch {
            Glibc.close(descriptor)
            throw error
        }
    }

    /// Reads a journal without opening it for writing (a read-only cache).
    static func read(path: String) throws(WebImageError) -> Result<Replay, Broken> {
        guard let bytes = try FileSystem.contents(of: path) else { return .failure(Broken(reason: "no journal")) }
        return bytes.withUnsafeBytes { replayRecords($0) }
    }

    /// Replaces the journal with one `E` record per entry, least recently used first, written to
    /// a side file and renamed over the old one so that a crash leaves one or the other whole.
    mutating func compact(_ entries: [DiskCacheEntry], synchronously: Bool) throws(WebImageError) {
        let sidePath = path + ".compacting"
        var buffer = Self.magic
        for entry in entries { Self.encode(.entry(entry), into: &buffer) }
        let side = try FileSystem.open(sidePath, O_WRONLY | O_CREAT | O_TRUNC)
        do throws(WebImageError) {
            try FileSystem.writeAll(side, buffer, path: sidePath)
            if synchronously { try FileSystem.sync(side, path: sidePath) }
            try FileSystem.rename(sidePath, path)
        } catch {
            Glibc.close(side)
            try? FileSystem.unlink(sidePath)
            throw error
        }
        Glibc.close(descriptor)
        descriptor = side
        _ = lseek(descriptor, 0, SEEK_END)
        length = buffer.count
        recordCount = entries.count
    }

    /// Appends encoded records. On failure the file is cut back to where it was, so a failed
    /// append never leaves half a record in the middle of the journal.
    mutating func append(_ records: [UInt8], count: Int, synchronously: Bool) throws(WebImageError) {
        guard !records.isEmpty else { return }
        do throws(WebImageError) {
            try FileSystem.writeAll(descriptor, records, path: path)
            if synchronously { try FileSystem.sync(descriptor, path: path) }
        } catch {
            try? truncate(to: length)
            throw error
        }
        length += records.count
        recordCount += count
    }

    /// Empties the journal down to its magic.
    mutating func reset() throws(WebImageError) {
        try truncate(to: 0)
        try writeMagic()
        recordCount = 0
    }

    func closeFile() {
        Glibc.close(descriptor)
    }

    /// Whether the journal file was deleted under the cache (its directory removed).
    var isUnlinked: Bool {
        FileSystem.isUnlinked(descriptor)
    }

    private mutating func writeMagic() throws(WebImageError) {
        try FileSystem.writeAll(descriptor, Self.magic, path: path)
        length = Self.magic.count
    }

    private mutating func truncate(to newLength: Int) throws(WebImageError) {
        try FileSystem.truncate(descriptor, to: newLength, path: path)
        _ = lseek(descriptor, off_t(newLength), SEEK_SET)
        length = newLength
    }

    // MARK: - Encoding

    static func encode(_ record: Record, into buffer: inout [UInt8]) {
        var writer = BinaryWriter()
        switch record {
        case .begin(let entry):
            writer.write(UInt8(ascii: "B"))
            encodeEntry(entry, &writer)
        case .entry(let entry):
            if let location = entry.location {
                writer.write(UInt8(ascii: "P"))
                encodeLocation(location, &writer)
            } else {
                writer.write(UInt8(ascii: "E"))
            }
            encodeEntry(entry, &writer)
        case .update(let entry):
            writer.write(UInt8(ascii: "U"))
            writer.write(UInt8(entry.location == nil ? 0 : 1))
            if let location = entry.location { encodeLocation(location, &writer) }
            encodeEntry(entry, &writer)
        case .commit(let id):
            writer.write(UInt8(ascii: "C"))
            writer.write(raw: id.bytes)
        case .delete(let id):
            writer.write(UInt8(ascii: "D"))
            writer.write(raw: id.bytes)
        case .access(let id, let date):
            writer.write(UInt8(ascii: "A"))
            writer.write(raw: id.bytes)
            writer.write(date.timeIntervalSince1970)
        case .clear:
            writer.write(UInt8(ascii: "X"))
        }
        let payload = writer.bytes
        var frame = BinaryWriter()
        frame.write(UInt32(payload.count))
        frame.write(raw: payload)
        frame.write(checksum(payload))
        buffer.append(contentsOf: frame.bytes)
    }

    private static func encodeLocation(_ location: PackedLocation, _ writer: inout BinaryWriter) {
        writer.write(location.segment)
        writer.write(UInt64(location.offset))
        writer.write(location.checksum)
    }

    private static func decodeLocation(_ reader: inout BinaryReader) throws -> PackedLocation {
        let segment = try reader.readUInt32()
        let offset = Int(clamping: try reader.readUInt64())
        return PackedLocation(segment: segment, offset: offset, checksum: try reader.readUInt32())
    }

    private static func encodeEntry(_ entry: DiskCacheEntry, _ writer: inout BinaryWriter) {
        writer.write(raw: entry.fileID.bytes)
        writer.write(optional: entry.key)
        writer.write(optional: entry.fileName)
        writer.write(UInt64(entry.size))
        writer.write(entry.created.timeIntervalSince1970)
        writer.write(entry.lastAccess.timeIntervalSince1970)
        writer.write(optional: entry.metadata.contentType)
        writer.write(optional: entry.metadata.etag)
        writer.write(optional: entry.metadata.lastModified)
        writer.write(entry.metadata.expires?.timeIntervalSince1970 ?? .nan)
        writer.write(optional: entry.metadata.extendedData)
        // Added after the first release: a journal written before has entries that end here.
        let headers = entry.metadata.retainedHeaders
        if let freshness = entry.metadata.freshness {
            writer.write(freshness.freshUntil.timeIntervalSince1970)
            writer.write(freshness.staleWhileRevalidate)
            writer.write(UInt8(freshness.mustRevalidate ? 1 : 0))
            writer.write(freshness.lifetime)
        } else if !headers.isEmpty {
            // No freshness, but headers follow: a NaN in its place says so.
            writer.write(Double.nan)
            writer.write(0.0)
            writer.write(UInt8(0))
            writer.write(0.0)
        }
        // Added later still: the retained headers, after the freshness.
        guard !headers.isEmpty else { return }
        writer.write(UInt32(headers.count))
        for (name, values) in headers.sorted(by: { $0.key < $1.key }) {
            writer.write(optional: name)
            writer.write(UInt32(values.count))
            for value in values { writer.write(optional: value) }
        }
    }

    private static func checksum(_ bytes: some Collection<UInt8>) -> UInt32 {
        let contiguous = Array(bytes)
        return contiguous.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, UInt32($0.count))) }
    }

    private static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        UInt32(crc32(0, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt32(bytes.count)))
    }

    // MARK: - Replay

    private static func replayRecords(_ bytes: UnsafeRawBufferPointer) -> Result<Replay, Broken> {
        guard bytes.count >= magic.count, magic.elementsEqual(bytes.prefix(magic.count)) else {
            return .failure(Broken(reason: "the journal does not start with its magic"))
        }
        var replay = Replay()
        var reader = BinaryReader(bytes)
        do {
            _ = try reader.readRaw(magic.count)
            replay.validLength = reader.offset
            var generation = 0
            while reader.remaining > 0 {
                guard reader.remaining >= 8 else { break }
                let length = Int(try reader.readUInt32())
                guard length > 0, length <= maximumRecordSize else {
                    return .failure(Broken(reason: "a record claims \(length) bytes at \(replay.validLength)"))
                }
                guard reader.remaining >= length + 4 else { break }
                let payload = try reader.readRaw(length)
                guard try reader.readUInt32() == checksum(payload) else {
                    return .failure(Broken(reason: "a record's checksum fails at \(replay.validLength)"))
                }
                generation += 1
                try apply(payload, to: &replay, generation: generation)
                replay.recordCount += 1
                replay.validLength = reader.offset
            }
        } catch let broken as Broken {
            return .failure(broken)
        } catch {
            return .failure(Broken(reason: "a record ends early at \(replay.validLength)"))
        }
        return .success(replay)
    }

    private static func apply(_ payload: UnsafeRawBufferPointer, to replay: inout Replay, generation: Int) throws {
        var reader = BinaryReader(payload)
        let type = try reader.readByte()
        switch type {
        case UInt8(ascii: "B"):
            let entry = try decodeEntry(&reader, generation: generation)
            replay.uncommitted[entry.fileID] = entry
            replay.markStore()
        case UInt8(ascii: "E"), UInt8(ascii: "P"):
            let location = type == UInt8(ascii: "P") ? try decodeLocation(&reader) : nil
            var entry = try decodeEntry(&reader, generation: generation)
            entry.location = location
            _ = replay.entries.remove(entry.fileID)
            _ = replay.entries.insert(entry, for: entry.fileID, cost: entry.storedSize)
            replay.markStore()
        case UInt8(ascii: "U"):
            let location = try reader.readByte() == 1 ? try decodeLocation(&reader) : nil
            var entry = try decodeEntry(&reader, generation: generation)
            entry.location = location
            replay.entries.update(entry.fileID) { $0 = entry }
        case UInt8(ascii: "C"):
            let id = try decodeID(&reader)
            if let entry = replay.uncommitted.removeValue(forKey: id) {
                _ = replay.entries.remove(id)
                _ = replay.entries.insert(entry, for: id, cost: entry.storedSize)
            }
            replay.markStore()
        case UInt8(ascii: "A"):
            let id = try decodeID(&reader)
            let date = Date(timeIntervalSince1970: try reader.readDouble())
            replay.entries.update(id) { $0.lastAccess = date }
            replay.entries.touch(id)
        case UInt8(ascii: "D"):
            let id = try decodeID(&reader)
            _ = replay.entries.remove(id)
            replay.uncommitted.removeValue(forKey: id)
            replay.trailingDeletes.append(id)
        case UInt8(ascii: "X"):
            replay.entries = LRUList()
            replay.uncommitted = [:]
            replay.trailingDeletes = []
            replay.trailingClear = true
        default:
            throw Broken(reason: "unknown record type \(type)")
        }
    }

    private static func decodeID(_ reader: inout BinaryReader) throws -> FileID {
        guard let id = FileID(bytes: try reader.readRaw(32)) else { throw Broken(reason: "bad file id") }
        return id
    }

    private static func decodeHeaders(_ reader: inout BinaryReader) throws -> [String: [String]] {
        var headers: [String: [String]] = [:]
        let count = try reader.readUInt32()
        for _ in 0..<count {
            guard let name = try reader.readOptionalString() else { throw Broken(reason: "a retained header has no name") }
            let valueCount = try reader.readUInt32()
            // Each value takes at least its length's bytes: a count past what is left is damage.
            guard Int(valueCount) <= reader.remaining else { throw Broken(reason: "a retained header's count is past the record") }
            headers[name] = try (0..<valueCount).map { _ in try reader.readOptionalString() ?? "" }
        }
        return headers
    }

    private static func decodeEntry(_ reader: inout BinaryReader, generation: Int) throws -> DiskCacheEntry {
        let id = try decodeID(&reader)
        let key = try reader.readOptionalString()
        guard let fileName = try reader.readOptionalString() else { throw Broken(reason: "an entry has no file name") }
        let size = Int(clamping: try reader.readUInt64())
        let created = try reader.readDouble()
        let lastAccess = try reader.readDouble()
        let contentType = try reader.readOptionalString()
        let etag = try reader.readOptionalString()
        let lastModified = try reader.readOptionalString()
        let expires = try reader.readDouble()
        let extended = try reader.readOptionalBytes().map { Data($0) }
        var freshness: HTTPFreshness?
        if reader.remaining > 0 {
            let freshUntil = try reader.readDouble()
            let read = HTTPFreshness(
                freshUntil: Date(timeIntervalSince1970: freshUntil), staleWhileRevalidate: try reader.readDouble(),
                mustRevalidate: try reader.readByte() == 1, lifetime: try reader.readDouble())
            freshness = freshUntil.isNaN ? nil : read
        }
        var metadata = DiskCacheMetadata(
            contentType: contentType, etag: etag, lastModified: lastModified,
            expires: expires.isNaN ? nil : Date(timeIntervalSince1970: expires), extendedData: extended, freshness: freshness
        )
        if reader.remaining > 0 { metadata.retainedHeaders = try decodeHeaders(&reader) }
        var entry = DiskCacheEntry(
            key: key, fileID: id, fileName: fileName, size: size,
            created: Date(timeIntervalSince1970: created), lastAccess: Date(timeIntervalSince1970: lastAccess), metadata: metadata
        )
        entry.generation = generation
        return entry
    }
}

extension DiskCacheJournal.Replay {
    fileprivate mutating func markStore() {
        trailingDeletes = []
        trailingClear = false
    }
}
