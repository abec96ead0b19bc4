import Foundation
import NIOCore

/// Whether a loopback connection comes from this very process.
///
/// The address guard's SOCKS listener is for the downloader that made it. AsyncHTTPClient's
/// SOCKS client cannot authenticate (it offers no method but "none"), so the guard tells its own
/// connections from any other local process's by the kernel's socket table: the connecting
/// socket (the peer's address and port, connected to the guard's) must be one of this process's
/// open descriptors. Read from `/proc` once per new guard connection, not per request.
enum LocalPeer {
    /// Whether the TCP socket connected from `peer` to `local` is open in this process.
    static func isThisProcess(peer: SocketAddress, local: SocketAddress) -> Bool {
        guard let inode = inode(of: peer, connectedTo: local) else { return false }
        let target = "socket:[\(inode)]"
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == target }
    }

    /// The inode of the socket from `peer` to `local` in the kernel's table (`/proc/net/tcp` or
    /// `tcp6`), whose addresses are hexadecimal in the machine's byte order.
    private static func inode(of peer: SocketAddress, connectedTo local: SocketAddress) -> String? {
        guard let peerText = tableAddress(peer), let localText = tableAddress(local) else { return nil }
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            // Read to the end: `/proc` files report no size, and a read sized by it stops at a page.
            guard let data = FileHandle(forReadingAtPath: table)?.readDataToEndOfFile() else { continue }
            let text = String(decoding: data, as: UTF8.self)
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                if fields.count > 9, fields[1] == peerText, fields[2] == localText { return String(fields[9]) }
            }
        }
        return nil
    }

    /// `0100007F:1F90` for 127.0.0.1:8080: each 32-bit word of the address as the kernel prints
    /// it (its own byte order), then the port.
    private static func tableAddress(_ address: SocketAddress) -> String? {
        guard let port = address.port else { return nil }
        let portText = String(format: "%04X", port)
        switch address {
        case .v4(let v4):
            return String(format: "%08X", v4.address.sin_addr.s_addr) + ":" + portText
        case .v6(let v6):
            var words = v6.address.sin6_addr
            let text = withUnsafeBytes(of: &words) { raw in
                (0..<4).map { String(format: "%08X", raw.load(fromByteOffset: $0 * 4, as: UInt32.self)) }.joined()
            }
            return text + ":" + portText
        default:
            return nil
        }
    }
}
