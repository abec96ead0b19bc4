import Testing
@testable import WebImageDownloader
import WebImageTestSupport

/// The address policy's decision table: every range and every IPv4-in-IPv6 encoding, the lists
/// and their order. No connection is made.
@Suite("AddressPolicy")
struct AddressPolicyTests {
    let policy = AddressPolicy()

    private func rule(_ text: String, _ policy: AddressPolicy? = nil, host: String? = nil) throws -> String? {
        let address = try #require(IPAddress(text), "\(text) parses")
        guard case .refuse(let rule) = (policy ?? self.policy).decision(for: address, host: host) else { return nil }
        return rule
    }

    @Test(
        "special IPv4 ranges are refused with their names",
        arguments: [
            ("127.0.0.1", "loopback"), ("127.255.255.254", "loopback"),
            ("10.0.0.1", "private (RFC 1918)"), ("172.16.0.1", "private (RFC 1918)"), ("172.31.255.255", "private (RFC 1918)"),
            ("192.168.1.1", "private (RFC 1918)"),
            ("169.254.169.254", "link-local (cloud metadata)"), ("169.254.0.1", "link-local (cloud metadata)"),
            ("100.64.0.1", "shared address space (CGNAT, RFC 6598)"), ("100.127.255.255", "shared address space (CGNAT, RFC 6598)"),
            ("0.0.0.0", "unspecified (this network)"), ("0.1.2.3", "unspecified (this network)"),
            ("224.0.0.1", "multicast"), ("239.255.255.250", "multicast"),
            ("255.255.255.255", "broadcast"), ("240.0.0.1", "reserved"),
            ("192.0.2.7", "documentation (TEST-NET-1)"), ("198.18.0.1", "benchmarking"),
        ])
    func specialIPv4(address: String, expected: String) throws {
        #expect(try rule(address) == expected)
    }

    @Test(
        "public unicast addresses, and the neighbours of refused ranges, are allowed",
        arguments: [
            "8.8.8.8", "93.184.216.34", "172.32.0.1", "172.15.255.255", "100.128.0.1", "100.63.255.255", "11.0.0.1",
            "2a00:1450:4001:81c::200e", "2606:4700::1111", "2002:808:808::1", "64:ff9b::808:808", "::ffff:8.8.8.8",
        ])
    func publicAddresses(address: String) throws {
        #expect(try rule(address) == nil)
    }

    @Test(
        "special IPv6 ranges are refused with their names",
        arguments: [
            ("::1", "loopback"), ("::", "unspecified"), ("fc00::1", "unique local (ULA)"), ("fd12:3456::1", "unique local (ULA)"),
            ("fe80::1", "link-local"), ("fe80::1%eth0", "link-local"), ("ff02::1", "multicast"), ("2001:db8::1", "documentation"),
            ("64:ff9b:1::1", "NAT64 local use"), ("fec0::1", "site-local (deprecated)"),
        ])
    func specialIPv6(address: String, expected: String) throws {
        #expect(try rule(address) == expected)
    }

    @Test(
        "IPv4 inside IPv6 is unwrapped and judged as IPv4, in every encoding",
        arguments: [
            ("::ffff:127.0.0.1", "loopback (as IPv4-mapped)"),
            ("::ffff:169.254.169.254", "link-local (cloud metadata) (as IPv4-mapped)"),
            ("::10.0.0.1", "private (RFC 1918) (as IPv4-compatible)"),
            ("64:ff9b::192.168.0.1", "private (RFC 1918) (as NAT64)"),
            ("64:ff9b::7f00:1", "loopback (as NAT64)"),
            ("2002:7f00:1::", "loopback (as 6to4)"),
            ("2002:a00:1::1", "private (RFC 1918) (as 6to4)"),
            // Teredo: the server's address, and the client's inverted in the last 32 bits.
            ("2001:0:808:808:0:0:80ff:fffe", "loopback (as Teredo client)"),
            ("2001:0:a00:1::f7f7:f7f7", "private (RFC 1918) (as Teredo server)"),
            ("2a00:1450::5efe:10.0.0.1", "private (RFC 1918) (as ISATAP)"),
            ("2a00:1450::200:5efe:192.168.0.1", "private (RFC 1918) (as ISATAP)"),
        ])
    func embeddedIPv4(address: String, expected: String) throws {
        #expect(try rule(address) == expected)
    }

    @Test("the lists come first: denied host, denied network, allowed host, allowed network; then the ranges")
    func lists() throws {
        let custom = AddressPolicy(
            allowedNetworks: [IPNetwork("127.0.0.1/32")!, IPNetwork("10.0.0.0/8")!],
            deniedNetworks: [IPNetwork("8.8.8.0/24")!, IPNetwork("10.1.0.0/16")!],
            allowedHosts: ["Images.Internal", ".corp.example"],
            deniedHosts: ["evil.example", ".bad.example"]
        )
        #expect(try rule("127.0.0.1", custom) == nil)
        #expect(try rule("127.0.0.2", custom) == "loopback")
        #expect(try rule("8.8.8.8", custom) == "denied network 8.8.8.0/24")
        #expect(try rule("8.8.4.4", custom) == nil)
        #expect(try rule("10.2.3.4", custom) == nil)
        #expect(try rule("10.1.3.4", custom) == "denied network 10.1.0.0/16", "a denied network wins over an allowed one")
        #expect(try rule("192.168.0.5", custom, host: "images.internal.") == nil, "an allowed host connects wherever it resolves")
        #expect(try rule("192.168.0.5", custom, host: "a.corp.example") == nil)
        #expect(try rule("192.168.0.5", custom, host: "corp.example") == nil)
        #expect(try rule("192.168.0.5", custom, host: "notcorp.example") == "private (RFC 1918)")
        #expect(try rule("8.8.4.4", custom, host: "EVIL.example") == "denied host evil.example")
        #expect(try rule("8.8.4.4", custom, host: "x.bad.example") == "denied host x.bad.example")
        #expect(custom.decision(forHost: "evil.example") == .refuse(rule: "denied host evil.example"))
        #expect(custom.decision(forHost: "images.internal") == .allow)
        #expect(custom.decision(forHost: "unknown.example") == nil)
        let open = AddressPolicy(refusesSpecialAddresses: false, deniedNetworks: [IPNetwork("169.254.169.254")!])
        #expect(try rule("127.0.0.1", open) == nil)
        #expect(try rule("169.254.169.254", open) == "denied network 169.254.169.254/32")
    }

    @Test("addresses and networks parse strictly; shorthand forms are names, not addresses")
    func parsing() throws {
        for text in ["127.1", "0x7f000001", "017700000001", "2130706433", "999.1.1.1", "1.2.3", "localhost", "", "::1::2"] {
            #expect(IPAddress(text) == nil, "\(text) is not an address")
        }
        #expect(IPAddress("[::1]") == .v6(1))
        #expect(IPAddress("10.0.0.1") == .v4(0x0A00_0001))
        #expect(IPAddress("::ffff:1.2.3.4")?.description == "::ffff:1.2.3.4")
        #expect(IPAddress("2001:DB8::1")?.description == "2001:db8::1")
        #expect(IPNetwork("10.1.2.3/8")?.description == "10.0.0.0/8", "bits past the prefix are cleared")
        #expect(IPNetwork("10.0.0.0/33") == nil)
        #expect(IPNetwork("fd00::/129") == nil)
        #expect(IPNetwork("10.0.0.0/x") == nil)
        let everything = try #require(IPNetwork("::/0"))
        #expect(everything.contains(IPAddress("2001:db8::1")!))
        #expect(!everything.contains(IPAddress("1.2.3.4")!), "a network never contains the other family")
        #expect(IPNetwork("0.0.0.0/0")!.contains(IPAddress("255.1.2.3")!))
    }
}
