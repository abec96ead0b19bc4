/// Which addresses the downloader may connect to: the guard against server-side request forgery
/// (SSRF), for servers and crawlers that load URLs someone else chose.
///
/// With ``refusesSpecialAddresses`` every address that is not a public unicast address is
/// refused: loopback, RFC 1918 private networks, link-local (the cloud metadata address
/// 169.254.169.254 among them), CGNAT's shared space, unspecified, multicast, broadcast,
/// reserved and documentation blocks, IPv6 loopback, unique-local and link-local, and any IPv4
/// address carried inside an IPv6 one (mapped, compatible, 6to4, NAT64, Teredo, ISATAP), which
/// is unwrapped and judged as IPv4. Private networks are refused too, where imgproxy allows them
/// by default.
///
/// The lists come first, in this order: a denied host, a denied network, an allowed host, an
/// allowed network; then the special ranges. Host names match exactly (case aside), or as a
/// domain suffix when written with a leading dot (`.internal.example` matches
/// `a.internal.example`). A host on the allow-list may connect wherever its name resolves: list
/// only names you control.
///
/// The policy judges the address actually connected to, after DNS, on every connection and
/// every redirect hop (``ImageDownloaderConfiguration/addressPolicy``); judging it is a pure
/// function, tested as a table.
public struct AddressPolicy: Sendable, Hashable {
    /// The answer for one address.
    package enum Decision: Sendable, Hashable {
        case allow
        /// Refused, with the rule that refused it (`loopback`, `denied network 203.0.113.0/24`).
        case refuse(rule: String)
    }

    /// Refuse every address that is not public unicast (the ranges listed above). Default true.
    public var refusesSpecialAddresses: Bool
    /// Networks allowed even inside a refused range (an internal image service, a test origin).
    public var allowedNetworks: [IPNetwork]
    /// Networks always refused.
    public var deniedNetworks: [IPNetwork]
    /// Host names allowed whatever their addresses.
    public var allowedHosts: [String]
    /// Host names always refused, before any lookup.
    public var deniedHosts: [String]

    /// Creates a policy; the default refuses every special address and has empty lists.
    public init(
        refusesSpecialAddresses: Bool = true,
        allowedNetworks: [IPNetwork] = [],
        deniedNetworks: [IPNetwork] = [],
        allowedHosts: [String] = [],
        deniedHosts: [String] = []
    ) {
        self.refusesSpecialAddresses = refusesSpecialAddresses
        self.allowedNetworks = allowedNetworks
        self.deniedNetworks = deniedNetworks
        self.allowedHosts = allowedHosts.map { $0.lowercased() }
        self.deniedHosts = deniedHosts.map { $0.lowercased() }
    }

    /// The decision for a host name before it is resolved: a denied host is refused at once; an
    /// allowed one is allowed whatever it resolves to; nil when the addresses decide.
    package func decision(forHost host: String) -> Decision? {
        let name = Self.normalized(host)
        if Self.matches(name, deniedHosts) { return .refuse(rule: "denied host \(name)") }
        if Self.matches(name, allowedHosts) { return .allow }
        return nil
    }

    /// The refusal that needs no lookup: of a host that is itself a refused address, or a denied
    /// name; nil when the addresses a name resolves to must decide.
    func refusalBeforeLookup(of host: String) -> WebImageError? {
        let decision = IPAddress(host).map { self.decision(for: $0) } ?? decision(forHost: host)
        guard case .refuse(let rule)? = decision else { return nil }
        return WebImageError(
            .refusedAddress, "\(IPAddress(host)?.description ?? host) is refused: \(rule)", refusal: .addressPolicy(rule: rule))
    }

    /// The decision for connecting to `address`, reached through the name `host` (nil when the
    /// URL named the address itself).
    package func decision(for address: IPAddress, host: String? = nil) -> Decision {
        if let host, let byName = decision(forHost: host) { return byName }
        if let denied = deniedNetworks.first(where: { $0.contains(address) }) { return .refuse(rule: "denied network \(denied)") }
        if allowedNetworks.contains(where: { $0.contains(address) }) { return .allow }
        guard refusesSpecialAddresses, let range = Self.specialRange(of: address) else { return .allow }
        return .refuse(rule: range)
    }

    /// The name of the special range `address` is in, or nil for a public unicast address.
    public static func specialRange(of address: IPAddress) -> String? {
        switch address {
        case .v4(let value):
            return v4Ranges.first { $0.network.contains(.v4(value)) }?.name
        case .v6(let value):
            if let embedded = embeddedIPv4(in: value) {
                return specialRange(of: .v4(embedded.address)).map { "\($0) (as \(embedded.form))" }
            }
            return v6Ranges.first { $0.network.contains(.v6(value)) }?.name
        }
    }

    /// The IPv4 address an IPv6 one carries, and the name of the form that carries it; judged as
    /// IPv4, so `::ffff:127.0.0.1` is as much loopback as `127.0.0.1`. A Teredo address carries
    /// two (the server and, inverted, the client): the one that is special, if either is.
    static func embeddedIPv4(in value: UInt128) -> (address: UInt32, form: String)? {
        let low32 = UInt32(truncatingIfNeeded: value)
        if value >> 32 == 0xffff { return (low32, "IPv4-mapped") }
        // ::/96, the deprecated IPv4-compatible form; :: and ::1 are IPv6's own.
        if value >> 32 == 0, value > 1 { return (low32, "IPv4-compatible") }
        if value >> 32 == 0x0064_ff9b_0000_0000_0000_0000 { return (low32, "NAT64") }
        if value >> 112 == 0x2002 { return (UInt32(truncatingIfNeeded: value >> 80), "6to4") }
        if value >> 96 == 0x2001_0000 {
            let server = UInt32(truncatingIfNeeded: value >> 64)
            let client = ~low32
            if specialRange(of: .v4(client)) != nil { return (client, "Teredo client") }
            return (server, "Teredo server")
        }
        // ISATAP: an interface identifier of 0000:5efe or 0200:5efe, then the IPv4 address.
        let interface = UInt32(truncatingIfNeeded: value >> 32) & 0xfdff_ffff
        if interface == 0x0000_5efe { return (low32, "ISATAP") }
        return nil
    }

    private struct Range {
        let network: IPNetwork
        let name: String

        init(_ cidr: String, _ name: String) {
            network = IPNetwork(cidr)!
            self.name = name
        }
    }

    /// IANA's special-purpose IPv4 registry (RFC 6890 and later), every block that is not
    /// reachable public unicast.
    private static let v4Ranges: [Range] = [
        Range("0.0.0.0/8", "unspecified (this network)"),
        Range("10.0.0.0/8", "private (RFC 1918)"),
        Range("100.64.0.0/10", "shared address space (CGNAT, RFC 6598)"),
        Range("127.0.0.0/8", "loopback"),
        Range("169.254.0.0/16", "link-local (cloud metadata)"),
        Range("172.16.0.0/12", "private (RFC 1918)"),
        Range("192.0.0.0/24", "IETF protocol assignments"),
        Range("192.0.2.0/24", "documentation (TEST-NET-1)"),
        Range("192.88.99.0/24", "6to4 relay anycast"),
        Range("192.168.0.0/16", "private (RFC 1918)"),
        Range("198.18.0.0/15", "benchmarking"),
        Range("198.51.100.0/24", "documentation (TEST-NET-2)"),
        Range("203.0.113.0/24", "documentation (TEST-NET-3)"),
        Range("224.0.0.0/4", "multicast"),
        Range("255.255.255.255/32", "broadcast"),
        Range("240.0.0.0/4", "reserved"),
    ]

    /// IANA's special-purpose IPv6 registry, after the forms that embed IPv4.
    private static let v6Ranges: [Range] = [
        Range("::/128", "unspecified"),
        Range("::1/128", "loopback"),
        Range("64:ff9b:1::/48", "NAT64 local use"),
        Range("100::/64", "discard-only"),
        Range("2001:db8::/32", "documentation"),
        Range("2001::/23", "IETF protocol assignments"),
        Range("fc00::/7", "unique local (ULA)"),
        Range("fe80::/10", "link-local"),
        Range("fec0::/10", "site-local (deprecated)"),
        Range("ff00::/8", "multicast"),
    ]

    private static func normalized(_ host: String) -> String {
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        return name
    }

    private static func matches(_ name: String, _ patterns: [String]) -> Bool {
        patterns.contains { pattern in
            pattern.hasPrefix(".") ? name.hasSuffix(pattern) || name == pattern.dropFirst() : name == pattern
        }
    }
}
