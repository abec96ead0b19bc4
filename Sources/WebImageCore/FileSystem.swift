package import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin POSIX file operations that report failures as ``WebImageError/Code/cacheIO`` with the
/// errno attached. The disk cache needs their exact semantics (O_EXCL, rename, fsync, flock).
package enum FileSystem {
    package static func error(_ operation: String, _ path: String, errno code: Int32 = errno) -> WebImageError {
        let posix = POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        return WebImageError(.cacheIO, "\(operation) \(path): \(String(cString: strerror(code)))", underlying: posix)
    }

    package static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws(WebImageError) -> Int32 {
        let descriptor = Glibc.open(path, flags | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw error("open", path) }
        return descriptor
    }

    /// Opens `path` with `O_CREAT` and `flags`, creating `folder` (its directory) first when it
    /// is missing: a deleted cache directory comes back on the next write.
    package static func create(_ path: String, in folder: String, _ flags: Int32) throws(WebImageError) -> Int32 {
        do throws(WebImageError) {
            return try open(path, flags | O_CREAT)
        } catch {
            guard (error.underlyingError as? POSIXError)?.code == .ENOENT else { throw error }
            try makeDirectory(folder)
            return try open(path, flags | O_CREAT)
        }
    }

    /// Writes every byte, retrying short writes and EINTR.
    package static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(WebImageError) {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw error("write", path)
            }
            offset += written
        }
    }

    /// Writes every byte of an array.
    package static func writeAll(_ descriptor: Int32, _ bytes: [UInt8], path: String) throws(WebImageError) {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(WebImageError) in try writeAll(descriptor, raw, path: path) }
        }
        try result.get()
    }

    /// Reads `count` bytes from the start of an open file; nil when the file is shorter.
    package static func read(_ descriptor: Int32, count: Int, path: String) throws(WebImageError) -> Data? {
        guard count > 0 else { return Data() }
        // Not zeroed first: every byte handed out was read from the file (a short file gives nil).
        // Zeroing a cached 512 KB source before reading it over was 1% of a proxy request.
        let memory = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16)
        var offset = 0
        while offset < count {
            let got = Glibc.read(descriptor, memory + offset, count - offset)
            if got < 0 {
                if errno == EINTR { continue }
                memory.deallocate()
                throw error("read", path)
            }
            if got == 0 { break }
            offset += got
        }
        guard offset == count else {
            memory.deallocate()
            return nil
        }
        return Data(bytesNoCopy: memory, count: count, deallocator: .custom { pointer, _ in pointer.deallocate() })
    }

    /// Writes every byte at `offset`, retrying short writes and EINTR; the file position is not
    /// used or moved.
    package static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int, path: String) throws(WebImageError) {
        var done = 0
        while done < bytes.count {
            let written = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            if written < 0 {
                if errno == EINTR { continue }
                throw error("write", path)
            }
            done += written
        }
    }

    /// Reads up to `buffer.count` bytes at `offset`; returns how many were read (fewer only at the
    /// end of the file).
    package static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int, path: String)
        throws(WebImageError) -> Int
    {
        var done = 0
        while done < buffer.count {
            let got = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            if got < 0 {
                if errno == EINTR { continue }
                throw error("read", path)
            }
            if got == 0 { break }
            done += got
        }
        return done
    }

    /// The whole content of a file, or nil when it does not exist.
    package static func contents(of path: String) throws(WebImageError) -> [UInt8]? {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw error("open", path)
        }
        defer { close(descriptor) }
        let size = try self.size(of: descriptor, path: path)
        guard let data = try read(descriptor, count: size, path: path) else { throw error("read", path, errno: EIO) }
        return [UInt8](data)
    }

    package static func size(of descriptor: Int32, path: String) throws(WebImageError) -> Int {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw error("stat", path) }
        return Int(info.st_size)
    }

    /// Whether the open file has been unlinked (its directory deleted, for instance).
    package static func isUnlinked(_ descriptor: Int32) -> Bool {
        var info = stat()
        return fstat(descriptor, &info) != 0 || info.st_nlink == 0
    }

    package static func sync(_ descriptor: Int32, path: String) throws(WebImageError) {
        guard fsync(descriptor) == 0 else { throw error("fsync", path) }
    }

    package static func truncate(_ descriptor: Int32, to length: Int, path: String) throws(WebImageError) {
        guard ftruncate(descriptor, off_t(length)) == 0 else { throw error("truncate", path) }
    }

    package static func rename(_ source: String, _ destination: String) throws(WebImageError) {
        guard Glibc.rename(source, destination) == 0 else { throw error("rename", "\(source) → \(destination)") }
    }

    /// Writes `PATH.partial` and renames it to `path`, so that a file under its name is always
    /// whole (a run stopped in the middle leaves only a `.partial`). No fsync: what is written
    /// this way (a dataset's shard files, the command's outputs) is rebuilt by a rerun.
    package static func writeWhole(_ bytes: Data, to path: String) throws(WebImageError) {
        let partial = path + ".partial"
        let descriptor = try open(partial, O_WRONLY | O_CREAT | O_TRUNC)
        defer { close(descriptor) }
        try bytes.withTypedBytes { raw throws(WebImageError) in try writeAll(descriptor, raw, path: partial) }
        try rename(partial, path)
    }

    /// Removes a file; a missing file is not an error.
    package static func unlink(_ path: String) throws(WebImageError) {
        guard Glibc.unlink(path) == 0 || errno == ENOENT else { throw error("unlink", path) }
    }

    /// Creates a directory and its missing parents.
    package static func makeDirectory(_ path: String) throws(WebImageError) {
        if mkdir(path, 0o755) == 0 || errno == EEXIST { return }
        guard errno == ENOENT else { throw error("mkdir", path) }
        let parent = (path as NSString).deletingLastPathComponent
        guard !parent.isEmpty, parent != path else { throw error("mkdir", path) }
        try makeDirectory(parent)
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else { throw error("mkdir", path) }
    }

    /// The names in a directory, without `.` and `..`; empty when it does not exist.
    package static func names(in path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Size and modification time of a path, or nil when it does not exist or is not a file.
    package static func fileInfo(_ path: String) -> (size: Int, modified: Date)? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        let modified = Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
        return (Int(info.st_size), modified)
    }

    /// Takes an exclusive advisory lock; false when another process holds it and `wait` is false.
    package static func lockExclusively(_ descriptor: Int32, wait: Bool, path: String) throws(WebImageError) -> Bool {
        while true {
            if flock(descriptor, LOCK_EX | (wait ? 0 : LOCK_NB)) == 0 { return true }
            if errno == EINTR { continue }
            if errno == EWOULDBLOCK { return false }
            throw error("flock", path)
        }
    }
}
