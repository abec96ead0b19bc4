#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address as a number, for the address policy's range checks.
public enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    case v4(UInt32)
    case v6(UInt128)

    /// Parses the textual forms `inet_pton` accepts (`192.0.2.1`, `2001:db8::1`,
    /// `::ffff:10.0.0.1`), with or without the brackets of a URL host (`[::1]`); nil for
    /// anything else, host names included. Shorthand forms some resolvers accept (`127.1`,
    /// `0x7f000001`, `017700000001`) are not addresses here: a URL host in such a form is a
    /// name, and the guard resolves it like any name, so it is checked all the same.
    public init?(_ text: some StringProtocol) {
        var text = String(text)
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        // A zone index (`fe80::1%eth0`) names an interface, not an address.
        if let percent = text.firstIndex(of: "%") { text = String(text[..<percent]) }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self = .v4(UInt32(bigEndian: v4.s_addr))
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let value = withUnsafeBytes(of: &v6) { bytes in bytes.reduce(UInt128(0)) { $0 << 8 | UInt128($1) } }
        self = .v6(value)
    }

    /// The address from its bytes in network order: 4 for IPv4, 16 for IPv6.
    init?(bytes: some Collection<UInt8>) {
        switch bytes.count {
        case 4: self = .v4(bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        case 16: self = .v6(bytes.reduce(UInt128(0)) { $0 << 8 | UInt128($1) })
        default: return nil
        }
    }

    /// The address in network byte order.
    var bytes: [UInt8] {
        switch self {
        case .v4(let value): (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
        case .v6(let value): (0..<16).map { UInt8(truncatingIfNeeded: value >> (120 - 8 * $0)) }
        }
    }

    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        var raw = bytes
        let family = raw.count == 4 ? AF_INET : AF_INET6
        return raw.withUnsafeMutableBytes { source in
            buffer.withUnsafeMutableBufferPointer { target in
                guard inet_ntop(family, source.baseAddress, target.baseAddress, socklen_t(target.count)) != nil else { return "?" }
                return String(cString: target.baseAddress!)
            }
        }
    }
}

/// A block of addresses in CIDR notation (`10.0.0.0/8`, `fd00::/8`); a bare address is a block
/// of one.
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The first address of the block.
    public let address: IPAddress
    /// How many leading bits every address of the block shares with ``address``.
    public let prefixLength: Int

    /// Parses `ADDRESS/LENGTH` or a bare address; nil when either part is malformed or the
    /// length is past the family's width. Bits past the prefix are cleared.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parts[0]) else { return nil }
        let width = address.width
        var length = width
        if parts.count == 2 {
            guard let parsed = Int(parts[1]), (0...width).contains(parsed) else { return nil }
            length = parsed
        }
        self.init(address, prefixLength: length)
    }

    /// The block of `prefixLength` bits starting at `address` (bits past the prefix are cleared).
    public init(_ address: IPAddress, prefixLength: Int) {
        let length = max(0, min(prefixLength, address.width))
        self.prefixLength = length
        switch address {
        case .v4(let value): self.address = .v4(length == 0 ? 0 : value & ~UInt32(0) << (32 - length))
        case .v6(let value): self.address = .v6(length == 0 ? 0 : value & ~UInt128(0) << (128 - length))
        }
    }

    /// Whether `candidate` is in the block (an address of the other family never is).
    public func contains(_ candidate: IPAddress) -> Bool {
        switch (address, candidate) {
        case (.v4(let base), .v4(let value)):
            return prefixLength == 0 || value & ~UInt32(0) << (32 - prefixLength) == base
        case (.v6(let base), .v6(let value)):
            return prefixLength == 0 || value & ~UInt128(0) << (128 - prefixLength) == base
        default:
            return false
        }
    }

    public var description: String { "\(address)/\(prefixLength)" }
}

extension IPAddress {
    /// Bits in an address of this family.
    var width: Int {
        switch self {
        case .v4: 32
        case .v6: 128
        }
    }
}
