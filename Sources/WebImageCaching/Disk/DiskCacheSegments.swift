import CZlib
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where a packed entry's frame is in its segment.
struct PackedLocation: Equatable, Sendable {
    /// The segment's number (its file is `segments/<number, 8 digits>.seg`).
    let segment: UInt32
    /// The frame's first byte.
    let offset: Int
    /// The CRC-32 of the entry's bytes, checked on every read.
    let checksum: UInt32
}

/// The segment files that hold a ``DiskCache``'s small entries, many to a file.
///
/// A file per entry costs a file creation per store, which dominates small stores: on this
/// project's machine a 2 KB store into its own file ran at 0.23x Python `diskcache` (which keeps
/// values under 32 KB inside SQLite), and appending it to a segment at over 1x (`scripts/compare
/// diskcache-small`, figures in `docs/benchmarks.md`).
///
/// A segment is a run of frames, each `[mark, 4][file ID, 32][length, u32][CRC-32, u32][bytes]`,
/// little-endian. The mark is `WIPK` while the frame is an entry's and is overwritten with `DEAD`
/// once the journal has logged the entry's removal, so a second process reading the cache from an
/// older copy of the index skips removed entries as it would a deleted file. Frames are appended
/// to the active segment (the newest) only; a frame is written before the journal's record that
/// points to it, so a crash between the two leaves bytes nothing refers to, never an entry
/// without its bytes. Every read checks the mark, the ID, the length and the CRC, so a torn
/// frame (a power loss without `synchronousWrites`) is dropped, never served.
///
/// Bytes no entry refers to (removed, replaced or evicted entries; frames a crash orphaned) are
/// *waste*. Waste counts against the size limit with the entries, and a segment is compacted (its
/// live frames copied to the active segment, the file deleted) once waste passes half of it, or
/// sooner when the limit needs the room.
struct DiskCacheSegments {
    static let headerSize = 44
    static let liveMark: [UInt8] = Array("WIPK".utf8)
    static let deadMark: [UInt8] = Array("DEAD".utf8)
    /// Descriptors kept open for reads; past this many, one is closed before the next opens.
    static let maximumOpenDescriptors = 64

    struct Segment {
        var length: Int
        /// The bytes of the frames that entries refer to.
        var live: Int
    }

    /// A frame as a segment's bytes describe it.
    struct Frame {
        let id: FileID
        let offset: Int
        let size: Int
        let checksum: UInt32
        var frameSize: Int { DiskCacheSegments.headerSize + size }
    }

    let folder: String
    /// A segment is not appended to past this many bytes.
    let capacity: Int
    let writable: Bool
    private(set) var segments: [UInt32: Segment] = [:]
    /// The segment appends go to; nil until the next append opens one.
    private(set) var active: UInt32?
    private var nextNumber: UInt32 = 1
    private var descriptors: [UInt32: Int32] = [:]
    private(set) var totalLength = 0
    private(set) var totalLive = 0

    /// Bytes in segments that no entry refers to.
    var waste: Int { totalLength - totalLive }

    init(root: String, capacity: Int, writable: Bool) {
        folder = root + "/segments"
        self.capacity = capacity
        self.writable = writable
    }

    /// One sixteenth of the size limit, between 256 KiB and 16 MiB: compaction then copies at
    /// most a sixteenth of the cache at a time.
    static func capacity(forSizeLimit limit: Int) -> Int {
        guard limit > 0 else { return 16 << 20 }
        return min(16 << 20, max(256 << 10, limit / 16))
    }

    func path(of number: UInt32) -> String {
        let digits = String(number)
        return folder + "/" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits + ".seg"
    }

    static func numbers(in folder: String) -> [UInt32] {
        FileSystem.names(in: folder).compactMap { name in
            guard name.hasSuffix(".seg"), name.count == 12 else { return nil }
            return UInt32(name.prefix(8))
        }.sorted()
    }

    // MARK: - Opening

    /// Learns each segment's length and the live bytes the index puts in it; drops entries whose
    /// frame lies past the end of its segment (or whose segment is gone), deletes segments no
    /// entry refers to, and continues appending to the newest segment after its last live frame.
    /// Returns whether the index changed.
    mutating func load(index: inout LRUList<FileID, DiskCacheEntry>) -> Bool {
        let numbers = Self.numbers(in: folder)
        var lengths: [UInt32: Int] = [:]
        for number in numbers { lengths[number] = FileSystem.fileInfo(path(of: number))?.size }
        var live: [UInt32: Int] = [:]
        var liveEnd: [UInt32: Int] = [:]
        var dangling: [FileID] = []
        index.forEachValue { entry in
            guard let location = entry.location else { return }
            guard let length = lengths[location.segment], location.offset + entry.storedSize <= length else {
                dangling.append(entry.fileID)
                return
            }
            live[location.segment, default: 0] += entry.storedSize
            liveEnd[location.segment] = max(liveEnd[location.segment] ?? 0, location.offset + entry.storedSize)
        }
        for id in dangling { _ = index.remove(id) }
        for number in numbers {
            guard let length = lengths[number], let liveBytes = live[number] else {
                try? FileSystem.unlink(path(of: number))
                continue
            }
            segments[number] = Segment(length: length, live: liveBytes)
        }
        nextNumber = (numbers.last ?? 0) &+ 1
        if let newest = segments.keys.max(), let end = liveEnd[newest], end < capacity,
            let descriptor = try? descriptor(for: newest),
            (try? FileSystem.truncate(descriptor, to: end, path: path(of: newest))) != nil
        {
            // What lies past the last live frame is waste no entry can refer to again.
            segments[newest]?.length = end
            active = newest
        }
        totalLength = segments.values.reduce(0) { $0 + $1.length }
        totalLive = segments.values.reduce(0) { $0 + $1.live }
        return !dangling.isEmpty
    }

    /// The entries that the frames of every segment hold, newest segment last: what a directory
    /// scan recovers when the journal is lost (IDs and bytes, no keys or metadata).
    static func scan(root: String) -> [DiskCacheEntry] {
        var found: [DiskCacheEntry] = []
        let reader = DiskCacheSegments(root: root, capacity: 0, writable: false)
        for number in numbers(in: reader.folder) {
            let path = reader.path(of: number)
            guard let bytes = try? FileSystem.contents(of: path), let info = FileSystem.fileInfo(path) else { continue }
            for frame in frames(in: bytes)
            where checksum(bytes[(frame.offset + headerSize)..<(frame.offset + frame.frameSize)]) == frame.checksum {
                var entry = DiskCacheEntry(
                    key: nil, fileID: frame.id, fileName: frame.id.hex, size: frame.size,
                    created: info.modified, lastAccess: info.modified, metadata: DiskCacheMetadata())
                entry.location = PackedLocation(segment: number, offset: frame.offset, checksum: frame.checksum)
                found.append(entry)
            }
        }
        return found
    }

    // MARK: - Reading and writing

    /// Appends an entry's frame to the active segment (opening a new one when it is full).
    mutating func append(_ data: Data, id: FileID, synchronously: Bool) throws(WebImageError) -> PackedLocation {
        let checksum = data.withUnsafeBytes { Self.checksum($0) }
        var frame = Self.liveMark
        frame.reserveCapacity(Self.headerSize + data.count)
        withUnsafeBytes(of: id.words) { frame.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt32(data.count).littleEndian) { frame.append(contentsOf: $0) }
        withUnsafeBytes(of: checksum.littleEndian) { frame.append(contentsOf: $0) }
        frame.append(contentsOf: data)
        let (number, offset) = try write(frame, synchronously: synchronously)
        return PackedLocation(segment: number, offset: offset, checksum: checksum)
    }

    /// A descriptor of its own for reading a segment, or nil when the segment is gone. Frames are
    /// never rewritten in place (only marked dead) and a deleted segment stays readable through
    /// an open descriptor, so a read through it needs no lock; the caller closes it.
    mutating func readDescriptor(for number: UInt32) throws(WebImageError) -> Int32? {
        let shared: Int32
        do throws(WebImageError) {
            shared = try descriptor(for: number)
        } catch {
            guard (error.underlyingError as? POSIXError)?.code == .ENOENT else { throw error }
            return nil
        }
        let own = dup(shared)
        guard own >= 0 else { throw FileSystem.error("dup", path(of: number)) }
        return own
    }

    /// The bytes of the entry at `location`, read through `descriptor`, or nil when its frame is
    /// cut short, marked dead, or is not the entry's (another ID, length or checksum).
    static func readFrame(
        _ descriptor: Int32, at location: PackedLocation, id: FileID, size: Int, path: String
    ) throws(WebImageError) -> Data? {
        // The header and the bytes are read apart, so the bytes land in the `Data` returned,
        // copied once, and the checksum runs over them where they are.
        var header = [UInt8](repeating: 0, count: headerSize)
        let headerRead = try header.withUnsafeMutableBytes { buffer in
            Result { () throws(WebImageError) in try FileSystem.read(descriptor, into: buffer, at: location.offset, path: path) }
        }.get()
        guard headerRead == headerSize, let (isLive, frame) = Self.header(in: header, at: 0), isLive,
            frame.id == id, frame.size == size, frame.checksum == location.checksum
        else { return nil }
        var bytes = Data(count: size)
        let got = try bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(WebImageError) in
                try FileSystem.read(descriptor, into: buffer, at: location.offset + headerSize, path: path)
            }
        }.get()
        guard got == size, bytes.withUnsafeBytes({ checksum($0) }) == location.checksum else { return nil }
        return bytes
    }

    /// An entry's frame is no longer referred to: its bytes become waste, and its mark is
    /// overwritten when `markDead` (after the journal logged the removal).
    mutating func release(_ location: PackedLocation, size: Int, markDead: Bool) {
        guard var segment = segments[location.segment] else { return }
        let frameSize = Self.headerSize + size
        segment.live -= frameSize
        totalLive -= frameSize
        segments[location.segment] = segment
        guard markDead, writable, let descriptor = try? descriptor(for: location.segment) else { return }
        let path = path(of: location.segment)
        _ = Self.deadMark.withUnsafeBytes { try? FileSystem.writeAll(descriptor, $0, at: location.offset, path: path) }
    }

    /// The segment that compaction should take next: the one with the most waste when the cache
    /// is over its size limit, else a sealed one that is at least half waste; nil when none.
    func segmentToCompact(overLimit: Bool) -> UInt32? {
        if overLimit {
            return segments.filter { $0.value.length > $0.value.live }.max {
                $0.value.length - $0.value.live < $1.value.length - $1.value.live
            }?.key
        }
        return segments.first { number, segment in
            number != active && segment.length > segment.live && 2 * (segment.length - segment.live) >= segment.length
        }?.key
    }

    /// Stops appending to the active segment; the next append opens a new one.
    mutating func sealActive() {
        active = nil
    }

    /// A segment's bytes and the live-marked frames in them.
    func liveFrames(of number: UInt32) throws(WebImageError) -> (bytes: [UInt8], frames: [Frame]) {
        guard let bytes = try FileSystem.contents(of: path(of: number)) else { return ([], []) }
        return (bytes, Self.frames(in: bytes))
    }

    /// Copies frames (from a segment's `bytes`) to the end of the active segment, returning their
    /// new locations in order.
    mutating func copy(_ frames: [Frame], from bytes: [UInt8], synchronously: Bool) throws(WebImageError) -> [PackedLocation] {
        var locations: [PackedLocation] = []
        var pending: [UInt8] = []
        var pendingLocations: [(offset: Int, checksum: UInt32)] = []
        func flush() throws(WebImageError) {
            guard !pending.isEmpty else { return }
            let (number, start) = try write(pending, synchronously: synchronously)
            locations += pendingLocations.map { PackedLocation(segment: number, offset: start + $0.offset, checksum: $0.checksum) }
            pending = []
            pendingLocations = []
        }
        for frame in frames {
            let length = active.flatMap { segments[$0]?.length } ?? 0
            if length + pending.count + frame.frameSize > capacity && length + pending.count > 0 {
                try flush()
                if let active, let segment = segments[active], segment.length + frame.frameSize > capacity { sealActive() }
            }
            pendingLocations.append((pending.count, frame.checksum))
            pending += bytes[frame.offset..<(frame.offset + frame.frameSize)]
        }
        try flush()
        return locations
    }

    /// Deletes a segment file.
    mutating func remove(_ number: UInt32) {
        if let descriptor = descriptors.removeValue(forKey: number) { Glibc.close(descriptor) }
        try? FileSystem.unlink(path(of: number))
        if let segment = segments.removeValue(forKey: number) {
            totalLength -= segment.length
            totalLive -= segment.live
        }
        if active == number { active = nil }
    }

    /// Deletes every segment file.
    mutating func removeAll() {
        closeAll()
        for number in Self.numbers(in: folder) { try? FileSystem.unlink(path(of: number)) }
        segments = [:]
        active = nil
        totalLength = 0
        totalLive = 0
    }

    mutating func closeAll() {
        for descriptor in descriptors.values { Glibc.close(descriptor) }
        descriptors = [:]
    }

    // MARK: - Internals

    /// Writes bytes at the end of the active segment, opening a new one when they do not fit,
    /// and counts them live. A failed write is cut away.
    private mutating func write(_ bytes: [UInt8], synchronously: Bool) throws(WebImageError) -> (number: UInt32, offset: Int) {
        let number = try activeSegment(room: bytes.count)
        let offset = segments[number]?.length ?? 0
        let descriptor = try descriptor(for: number)
        let path = path(of: number)
        do throws(WebImageError) {
            try bytes.withUnsafeBytes { raw in
                Result { () throws(WebImageError) in try FileSystem.writeAll(descriptor, raw, at: offset, path: path) }
            }.get()
            if synchronously { try FileSystem.sync(descriptor, path: path) }
        } catch {
            try? FileSystem.truncate(descriptor, to: offset, path: path)
            throw error
        }
        segments[number]?.length += bytes.count
        segments[number]?.live += bytes.count
        totalLength += bytes.count
        totalLive += bytes.count
        return (number, offset)
    }

    private mutating func activeSegment(room: Int) throws(WebImageError) -> UInt32 {
        if let active, let segment = segments[active], segment.length == 0 || segment.length + room <= capacity {
            return active
        }
        let number = nextNumber
        let path = path(of: number)
        let descriptor = try FileSystem.create(path, in: folder, O_RDWR | O_TRUNC)
        nextNumber &+= 1
        keep(descriptor, for: number)
        segments[number] = Segment(length: 0, live: 0)
        active = number
        return number
    }

    private mutating func descriptor(for number: UInt32) throws(WebImageError) -> Int32 {
        if let descriptor = descriptors[number] { return descriptor }
        let descriptor = try FileSystem.open(path(of: number), writable ? O_RDWR : O_RDONLY)
        keep(descriptor, for: number)
        return descriptor
    }

    private mutating func keep(_ descriptor: Int32, for number: UInt32) {
        if descriptors.count >= Self.maximumOpenDescriptors, let victim = descriptors.keys.first(where: { $0 != active }) {
            Glibc.close(descriptors.removeValue(forKey: victim)!)
        }
        descriptors[number] = descriptor
    }

    /// The frames at the start of `bytes`, live ones only, up to the first that is not whole or
    /// carries neither mark.
    static func frames(in bytes: [UInt8]) -> [Frame] {
        var frames: [Frame] = []
        var offset = 0
        while let (isLive, frame) = header(in: bytes, at: offset), offset + frame.frameSize <= bytes.count {
            if isLive { frames.append(frame) }
            offset += frame.frameSize
        }
        return frames
    }

    /// The frame header at `offset`: whether it is marked live, and what it says; nil when the
    /// bytes end first or carry neither mark.
    static func header(in bytes: [UInt8], at offset: Int) -> (isLive: Bool, frame: Frame)? {
        guard offset >= 0, offset + headerSize <= bytes.count else { return nil }
        let mark = bytes[offset..<(offset + 4)]
        let isLive = mark.elementsEqual(liveMark)
        guard isLive || mark.elementsEqual(deadMark) else { return nil }
        func uint32(_ at: Int) -> UInt32 {
            (0..<4).reduce(0) { $0 | UInt32(bytes[offset + at + $1]) << (8 * $1) }
        }
        guard let id = bytes[(offset + 4)..<(offset + 36)].withUnsafeBytes({ FileID(bytes: $0) }) else { return nil }
        return (isLive, Frame(id: id, offset: offset, size: Int(uint32(36)), checksum: uint32(40)))
    }

    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        UInt32(crc32(0, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt32(bytes.count)))
    }

    static func checksum(_ bytes: some Collection<UInt8>) -> UInt32 {
        if let result = bytes.withContiguousStorageIfAvailable({ checksum(UnsafeRawBufferPointer($0)) }) { return result }
        return Array(bytes).withUnsafeBytes { checksum($0) }
    }
}
