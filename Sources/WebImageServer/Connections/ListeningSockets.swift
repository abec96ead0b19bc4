import CWebImageServer
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Frees the server's port the moment the process crashes.
///
/// Why: after a crash Swift's runtime starts its crash reporter (`swift-backtrace`) and holds the
/// crashed process until it is done (up to 30 s), and SwiftNIO opens sockets without
/// `SOCK_CLOEXEC`, so the reporter inherited the listener as well: the port stayed taken for as
/// long as either ran (95 s was seen) and a restarted server could not bind it. Each listening
/// socket is marked close-on-exec, and closed by a crash signal before the reporter starts.
enum ListeningSockets {
    /// Marks every listening socket this process has open close-on-exec and to be closed on a
    /// crash; returns how many.
    @discardableResult
    static func releaseOnCrash() -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return 0 }
        var marked = 0
        for descriptor in names.compactMap({ Int32($0) }) where isListeningSocket(descriptor) {
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0, fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) == 0, cwi_close_on_crash(descriptor) == 0 { marked += 1 }
        }
        return marked
    }

    private static func isListeningSocket(_ descriptor: Int32) -> Bool {
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else { return false }
        var accepting: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &length) == 0 && accepting != 0
    }
}
