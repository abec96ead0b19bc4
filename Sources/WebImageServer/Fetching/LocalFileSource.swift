import Crypto
import Foundation
import WebImage

#if canImport(Glibc)
import Glibc
#endif

/// `local:///PATH` sources read from a folder (imgproxy's `IMGPROXY_LOCAL_FILESYSTEM_ROOT`), with
/// no way out of it. The path, already percent-decoded with the rest of the source URL (encoded
/// dots and slashes included), is cleaned as a rooted path, as imgproxy's `http.Dir` cleans it:
/// `..` never climbs above the root, it stops there. Symbolic links are followed, but the file
/// they lead to must be inside the root too (imgproxy does not check this): the resolved path is
/// compared with the resolved root, and the last component is opened without following a link
/// swapped in after that check.
struct LocalFileSource: Sendable {
    /// The root, every symbolic link in it resolved.
    let root: String
    /// The most bytes a file may have (the source byte cap).
    let maximumBytes: Int

    /// - Throws: when `root` is not an existing folder (the server does not start).
    init(root: String, maximumBytes: Int) throws(WebImageError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory), isDirectory.boolValue,
            let resolved = Self.resolved(root)
        else { throw WebImageError(.invalidArgument, "the local filesystem root \(root) is not a folder") }
        self.root = resolved
        self.maximumBytes = maximumBytes
    }

    /// The pool local reads run in: a read blocks its thread (a FIFO until a writer comes, a hung
    /// NFS or FUSE mount for as long as it hangs), which the cooperative pool must never do, and
    /// which the work pool's one-per-core slots should not either. Eight threads at the most: a
    /// stuck mount holds those, and requests past them wait in the pool's queue until their
    /// deadline answers 504, while every other request goes on.
    static let readPool = WorkPool(width: 8)

    /// ``read(_:)`` in ``readPool``; a caller that stops waiting (its deadline passed, its client
    /// gone) is answered at once, and a read not yet started never runs.
    func load(_ path: String) async throws(ProxyError) -> LocalFile {
        let outcome: Result<LocalFile, ProxyError>
        do {
            outcome = try await Self.readPool.run { () throws(WebImageError) in
                do throws(ProxyError) { return .success(try read(path)) } catch { return .failure(error) }
            }
        } catch {
            throw ProxyError(status: 499, "the request was cancelled")
        }
        return try outcome.get()
    }

    /// The bytes of the file `path` names under the root. Opened without blocking and without
    /// following a last link, and judged by the descriptor's own `fstat` before any read: a FIFO,
    /// a device or a socket is refused without waiting for a writer.
    /// - Throws: 404 for no such file (or a folder, a FIFO, a device), 403 for a link that leads
    ///   outside the root, 413 for a file over the byte cap.
    func read(_ path: String) throws(ProxyError) -> LocalFile {
        let relative = Self.cleaned(path)
        guard !relative.isEmpty, !relative.contains("\0") else { throw .notFound("the local source names no file") }
        guard let resolved = Self.resolved(root + "/" + relative) else { throw .notFound("no local source /\(relative)") }
        guard resolved.hasPrefix(root.hasSuffix("/") ? root : root + "/") else {
            throw .refusedSource("the local source /\(relative) leads outside the root")
        }
        let descriptor = open(resolved, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw .notFound("no local source /\(relative)") }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            throw .notFound("the local source /\(relative) is not a file")
        }
        guard Int(status.st_size) <= maximumBytes else {
            throw .tooLarge("the source is over the byte limit: \(status.st_size) bytes, over \(maximumBytes)")
        }
        do {
            // One byte past the cap: a file that grew since its fstat is still refused.
            let data = try handle.read(upToCount: maximumBytes + 1) ?? Data()
            guard data.count <= maximumBytes else { throw ProxyError.tooLarge("the source is over the byte limit of \(maximumBytes)") }
            return LocalFile(data: data, path: "/" + relative, status: status)
        } catch let error as ProxyError {
            throw error
        } catch {
            throw ProxyError(status: 502, "the local source /\(relative) could not be read")
        }
    }

    /// `path` as a rooted path cleaned of empty, `.` and `..` segments (`..` at the top stays at
    /// the top), without its leading slash.
    static func cleaned(_ path: String) -> String {
        var segments: [Substring] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) where segment != "." {
            if segment == ".." {
                _ = segments.popLast()
            } else {
                segments.append(segment)
            }
        }
        return segments.joined(separator: "/")
    }

    /// `path` with every symbolic link resolved, nil when it does not exist.
    private static func resolved(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }
}

/// A local file's bytes and the validators imgproxy gives it (`storage/fs/reader.go`).
struct LocalFile: Sendable {
    var data: Data
    /// `"base64url(SHA-256(PATH__SIZE__MTIME))"`, the time in nanoseconds (imgproxy's `buildEtag`).
    var etag: String
    /// The time of the last change, as an HTTP date.
    var lastModified: String

    init(data: Data, path: String, status: stat) {
        self.data = data
        let nanoseconds = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
        etag = Self.etag(path: path, size: Int64(status.st_size), modifiedNanoseconds: nanoseconds)
        lastModified = HTTPDate.format(Date(timeIntervalSince1970: TimeInterval(status.st_mtim.tv_sec)))
    }

    static func etag(path: String, size: Int64, modifiedNanoseconds: Int64) -> String {
        let digest = SHA256.hash(data: Data("\(path)__\(size)__\(modifiedNanoseconds)".utf8))
        return "\"" + URLSigner.base64URL(Array(digest)) + "\""
    }
}
