import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Opening a disk cache: the directory lock, journal replay, crash recovery and the recovery scan.
extension DiskCache {
    /// The file name for a key: 64 hex digits of its SHA-256, then `.ext` when the key's path ends
    /// in an extension of 1 to 8 ASCII letters and digits (lowercased).
    static func fileName(for id: FileID, key: String) -> String {
        guard let fileExtension = safeExtension(of: key) else { return id.hex }
        return id.hex + "." + fileExtension
    }

    static func safeExtension(of key: String) -> String? {
        let path = key.prefix { $0 != "?" && $0 != "#" }
        let lastComponent = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard let dot = lastComponent.lastIndex(of: ".") else { return nil }
        let candidate = lastComponent[lastComponent.index(after: dot)...]
        guard (1...8).contains(candidate.count), candidate.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            return nil
        }
        return candidate.lowercased()
    }

    /// Takes the directory's lock, or returns nil when the cache must be read-only (another
    /// process holds it, or the directory is not writable).
    static func acquireLock(root: String, policy: DiskCacheConfiguration.LockPolicy) -> Int32? {
        guard let descriptor = try? FileSystem.open(root + "/lock", O_RDWR | O_CREAT) else { return nil }
        // A process being spawned holds a copy of every open file until its exec closes them,
        // so a lock this process just released can look held for a moment: try a few times.
        var acquired = false
        for attempt in 0..<5 where !acquired {
            if attempt > 0 { usleep(10_000) }
            acquired = (try? FileSystem.lockExclusively(descriptor, wait: policy == .wait, path: root + "/lock")) ?? false
        }
        guard acquired else {
            Glibc.close(descriptor)
            return nil
        }
        return descriptor
    }

    /// Replays the journal, finishes what a crash interrupted, and compacts when recovery
    /// changed anything. A missing or broken journal is rebuilt from one scan.
    /// `clearTemporaryFiles` is false when the cache reopens its own vanished directory: its
    /// temporary files then belong to stores in progress.
    static func openWritable(
        root: String, configuration: DiskCacheConfiguration, logger: Logger, clearTemporaryFiles: Bool = true
    ) throws(WebImageError) -> DiskCacheState {
        if clearTemporaryFiles {
            for name in FileSystem.names(in: root + "/tmp") { try? FileSystem.unlink(root + "/tmp/" + name) }
        }
        try? FileSystem.unlink(root + "/journal.compacting")
        let (journal, replay) = try DiskCacheJournal.open(path: root + "/journal")
        let segments = DiskCacheSegments(
            root: root, capacity: DiskCacheSegments.capacity(forSizeLimit: configuration.sizeLimit), writable: true)
        var state = DiskCacheState(segments: segments)
        state.journal = journal
        switch replay {
        case .success(var replay):
            var changed = finishInterruptedOperations(&replay, root: root)
            state.index = replay.entries
            state.generation = replay.recordCount
            changed = state.segments.load(index: &state.index) || changed
            if changed {
                try state.journal?.compact(state.index.oldestFirst().map(\.value), synchronously: configuration.synchronousWrites)
            }
        case .failure(let broken):
            if broken.reason != "the journal is new or empty" {
                logger.notice(
                    "rebuilding the disk cache index by a scan", metadata: ["reason": "\(broken.reason)", "directory": "\(root)"])
            }
            state.index = scan(root: root)
            _ = state.segments.load(index: &state.index)
            try state.journal?.compact(state.index.oldestFirst().map(\.value), synchronously: configuration.synchronousWrites)
        }
        return state
    }

    /// The index of a cache opened read-only: the journal as it is, or a scan without a journal.
    static func readIndex(root: String, logger: Logger) throws(WebImageError) -> LRUList<FileID, DiskCacheEntry> {
        switch try DiskCacheJournal.read(path: root + "/journal") {
        case .success(let replay):
            return replay.entries
        case .failure(let broken):
            logger.debug("read-only disk cache without a usable journal; scanning", metadata: ["reason": "\(broken.reason)"])
            return scan(root: root)
        }
    }

    /// Settles the stores a crash interrupted and redoes deletes that may not have run. Returns
    /// whether anything changed.
    private static func finishInterruptedOperations(_ replay: inout DiskCacheJournal.Replay, root: String) -> Bool {
        for (id, begun) in replay.uncommitted {
            settleUncommittedStore(begun, previous: replay.entries.peek(id), entries: &replay.entries, root: root)
        }
        for id in replay.trailingDeletes where replay.entries.peek(id) == nil {
            let folder = root + "/" + String(id.hex.prefix(2))
            for name in FileSystem.names(in: folder) where name.hasPrefix(id.hex) {
                try? FileSystem.unlink(folder + "/" + name)
            }
        }
        if replay.trailingClear { removeEntryFiles(root: root) }
        return !replay.uncommitted.isEmpty || replay.trailingClear
    }

    /// A store logged its begin record and then stopped: its rename either happened (the file is
    /// the new version, whole) or not (the file is the previous version, or absent). The file's
    /// size, and for equal sizes its modification time against the previous entry's creation,
    /// tell which; the entry that matches the file is kept, and a file that matches neither goes.
    private static func settleUncommittedStore(
        _ begun: DiskCacheEntry, previous: DiskCacheEntry?,
        entries: inout LRUList<FileID, DiskCacheEntry>, root: String
    ) {
        let path = root + "/" + begun.folderName + "/" + begun.fileName
        let info = FileSystem.fileInfo(path)
        if let info, info.size == begun.size,
            previous.map({ info.size != $0.size || info.modified > $0.created }) ?? true
        {
            _ = entries.remove(begun.fileID)
            _ = entries.insert(begun, for: begun.fileID, cost: begun.storedSize)
        } else if let info, let previous, info.size == previous.size {
            return
        } else {
            try? FileSystem.unlink(path)
            _ = entries.remove(begun.fileID)
        }
    }

    /// Recovers the entries from the files and segments themselves, oldest modification first.
    /// Keys and metadata live only in the journal, so recovered entries have neither; their data
    /// is still found by key, because the file name and the frame carry the key's hash. Of two
    /// frames of one entry, the later wins.
    static func scan(root: String) -> LRUList<FileID, DiskCacheEntry> {
        var found: [DiskCacheEntry] = []
        for folder in FileSystem.names(in: root) where folder.count == 2 && FileID.isHexByte(folder) {
            for name in FileSystem.names(in: root + "/" + folder) {
                let hex = name.prefix { $0 != "." }
                guard hex.hasPrefix(folder), let id = FileID(hex: hex),
                    let info = FileSystem.fileInfo(root + "/" + folder + "/" + name)
                else { continue }
                found.append(
                    DiskCacheEntry(
                        key: nil, fileID: id, fileName: name, size: info.size,
                        created: info.modified, lastAccess: info.modified, metadata: DiskCacheMetadata()
                    ))
            }
        }
        found += DiskCacheSegments.scan(root: root)
        var index = LRUList<FileID, DiskCacheEntry>()
        // Stable: frames of one segment keep their order, so the later of two frames wins.
        for entry in found.enumerated().sorted(by: { ($0.element.lastAccess, $0.offset) < ($1.element.lastAccess, $1.offset) }) {
            _ = index.remove(entry.element.fileID)
            _ = index.insert(entry.element, for: entry.element.fileID, cost: entry.element.storedSize)
        }
        return index
    }

    /// Deletes the entries' files and the segment files.
    static func removeEntryFiles(root: String) {
        var segments = DiskCacheSegments(root: root, capacity: 0, writable: true)
        segments.removeAll()
        for folder in FileSystem.names(in: root) where folder.count == 2 && FileID.isHexByte(folder) {
            let path = root + "/" + folder
            for name in FileSystem.names(in: path) { try? FileSystem.unlink(path + "/" + name) }
            rmdir(path)
        }
    }
}
