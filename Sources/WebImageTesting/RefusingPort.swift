public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A port on 127.0.0.1 where every connection is refused, for as long as this value is kept: a
/// socket bound to it that never listens. A port freed by a stopped server can be bound again by
/// another test running at the same time; this one cannot, so "nothing listens there" stays true.
public final class RefusingPort: Sendable {
    /// The port.
    public let port: Int
    private let descriptor: Int32

    /// Binds a socket to a free port on 127.0.0.1 without listening.
    public init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw RefusingPortError(call: "socket", code: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            close(descriptor)
            throw RefusingPortError(call: "bind", code: code)
        }
        self.descriptor = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }

    /// `http://127.0.0.1:PORT` followed by `path`.
    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }
}

/// A system call that failed while reserving a ``RefusingPort``.
public struct RefusingPortError: Error, CustomStringConvertible {
    /// The call that failed: `socket` or `bind`.
    public let call: String
    /// Its `errno`.
    public let code: Int32
    /// The call and the system's words for the error.
    public var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
}
