import Foundation
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Whether a loopback connection comes from this very process.
///
/// The address guard's SOCKS listener is for the downloader that made it. AsyncHTTPClient's
/// SOCKS client cannot authenticate (it offers no method but "none"), so the guard tells its own
/// connections from any other local process's by asking this process's own sockets: one of them
/// must be bound to the connection's peer address and port and connected to the guard's. Once
/// per new guard connection, not per request.
///
/// The sockets are asked directly (`getsockname` and `getpeername` on each open descriptor), not
/// looked up in the kernel's table of every socket on the machine (`/proc/net/tcp`): that table
/// grows with every connection in `TIME_WAIT`, and parsing it for each new connection took
/// 25 ms a connection, on the event loop, once a few thousand had closed.
enum LocalPeer {
    /// Whether the TCP socket connected from `peer` to `local` is open in this process.
    static func isThisProcess(peer: SocketAddress, local: SocketAddress) -> Bool {
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return false }
        return descriptors.contains { name in
            guard let descriptor = Int32(name) else { return false }
            return address(of: descriptor, getsockname).map { same($0, peer) } == true
                && address(of: descriptor, getpeername).map { same($0, local) } == true
        }
    }

    /// The address `call` (`getsockname` or `getpeername`) gives for `descriptor`; nil for a
    /// descriptor that is not a connected socket (or closed meanwhile).
    private static func address(
        of descriptor: Int32, _ call: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
    ) -> sockaddr_storage? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(descriptor, $0, &length) }
        }
        return status == 0 ? storage : nil
    }

    /// Whether a socket's address is `address`: the same family, port and IP address.
    private static func same(_ storage: sockaddr_storage, _ address: SocketAddress) -> Bool {
        var storage = storage
        switch address {
        case .v4(let v4):
            guard Int32(storage.ss_family) == AF_INET else { return false }
            let socket = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) }
            return socket.sin_port == v4.address.sin_port && socket.sin_addr.s_addr == v4.address.sin_addr.s_addr
        case .v6(let v6):
            guard Int32(storage.ss_family) == AF_INET6 else { return false }
            var socket = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) }
            var expected = v6.address.sin6_addr
            return socket.sin6_port == v6.address.sin6_port
                && withUnsafeBytes(of: &socket.sin6_addr) { ours in withUnsafeBytes(of: &expected) { ours.elementsEqual($0) } }
        default:
            return false
        }
    }
}
