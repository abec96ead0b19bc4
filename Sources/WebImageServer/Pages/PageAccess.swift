import Foundation
import WebImage

/// Who may use the pages. The playground signs any path with the node's key, which on the
/// internet would make the node a signing oracle: anyone could have it process anything; the
/// status page shows what the node was asked for and how it is configured. So each answers
/// clients on a loopback address only, unless its token is configured and the client presents it.
///
/// A request that came through a proxy (`Forwarded`, `X-Forwarded-For` or `X-Real-IP`, which the
/// nginx tier adds) is not a loopback client, whatever address it arrives from, unless the proxy
/// is one the node trusts (`--trusted-proxies`): then the client is the one the proxy names in
/// the header the operator names (`--client-ip-header`, `X-Forwarded-For` by default).
enum PageAccess {
    /// The verdict, with the reason a refusal gives.
    enum Decision: Equatable, Sendable {
        case allowed
        case refused(String)
    }

    /// The headers a proxy names the client with, as a request carries them.
    struct Forwarding: Sendable, Equatable {
        /// `Forwarded` (RFC 7239).
        var forwarded: String?
        /// `X-Forwarded-For`.
        var forwardedFor: String?
        /// `X-Real-IP`.
        var realIP: String?

        var isEmpty: Bool { forwarded == nil && forwardedFor == nil && realIP == nil }
    }

    /// The client a request comes from: the peer, or, behind a trusted proxy, the client named by
    /// the one header the operator says that proxy sets (`header`, nginx's `real_ip_header`): the
    /// right-most address in it that is not itself a trusted proxy (nginx's `real_ip_recursive`,
    /// imgproxy's reading of `X-Forwarded-For`), since every hop left of the last trusted one was
    /// written by whoever sent the request. The other headers are the client's own words and count
    /// for nothing: a spoofed `X-Real-IP` behind a proxy that sets only `X-Forwarded-For` names no
    /// one. A trusted proxy that sent no such header stands between an unknown client, so
    /// `forwarded` is true then, as it is for any proxy the node does not trust.
    static func client(peer: String?, forwarding: Forwarding, trustedProxies: [IPNetwork], header: ClientIPHeader = .forwardedFor)
        -> (address: String?, forwarded: Bool)
    {
        guard !forwarding.isEmpty else { return (peer, false) }
        guard let peer, isTrusted(peer, trustedProxies) else { return (peer, true) }
        let hops = header.hops(in: forwarding).map(Self.bareAddress).filter { !$0.isEmpty }
        guard !hops.isEmpty else { return (nil, true) }
        let named = hops.last { !isTrusted($0, trustedProxies) } ?? hops[0]
        return (named, false)
    }

    /// Whether `address` is one of the trusted proxies.
    private static func isTrusted(_ address: String, _ trustedProxies: [IPNetwork]) -> Bool {
        guard let parsed = IPAddress(address) else { return false }
        return trustedProxies.contains { $0.contains(parsed) }
    }

    /// An address without the quotes, brackets and port a header may give it.
    private static func bareAddress(_ text: String) -> String {
        var address = text.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        if address.hasPrefix("["), let close = address.firstIndex(of: "]") {
            address = String(address[address.index(after: address.startIndex)..<close])
        } else if address.filter({ $0 == ":" }).count == 1, let colon = address.firstIndex(of: ":") {
            address = String(address[..<colon])
        }
        return address
    }

    /// The rule of a page.
    /// - Parameters:
    ///   - page: the page's name and its token option, for the reasons.
    ///   - clientAddress: the client's IP address as text (``client(peer:forwarding:trustedProxies:)``), nil when unknown.
    ///   - forwarded: whether an untrusted proxy stands between.
    ///   - token: the page's configured token, if any.
    ///   - presented: the token the request carries (query `token` or the page's header).
    static func decide(
        _ page: (name: String, option: String, header: String), clientAddress: String?, forwarded: Bool, token: String?, presented: String?
    ) -> Decision {
        if let token, let presented {
            return matches(token, presented) ? .allowed : .refused("the \(page.name) token is wrong")
        }
        if !forwarded, let clientAddress, isLoopback(clientAddress) { return .allowed }
        return .refused(
            token == nil
                ? "the \(page.name) answers loopback clients only; start the server with \(page.option) to open it to others"
                : "the \(page.name) needs its token (?token=... or \(page.header))")
    }

    /// The playground's rule: ``decide(_:clientAddress:forwarded:token:presented:)`` for it.
    static func playground(clientAddress: String?, forwarded: Bool, token: String?, presented: String?) -> Decision {
        decide(playgroundPage, clientAddress: clientAddress, forwarded: forwarded, token: token, presented: presented)
    }

    static let playgroundPage = (name: "playground", option: "--playground-token", header: "X-Playground-Token")
    static let statusPage = (name: "status page", option: "--status-token", header: "X-Status-Token")

    /// Whether a textual IP address is on loopback: 127.0.0.0/8, ::1, or 127/8 mapped into IPv6.
    static func isLoopback(_ address: String) -> Bool {
        guard let parsed = IPAddress(address) else { return false }
        return loopbackNetworks.contains { $0.contains(parsed) }
    }

    private static let loopbackNetworks = ["127.0.0.0/8", "::1/128", "::ffff:127.0.0.0/104"].compactMap { IPNetwork($0) }

    /// Compares without stopping at the first difference, so the time says nothing of the token.
    private static func matches(_ expected: String, _ given: String) -> Bool {
        let left = Array(expected.utf8)
        let right = Array(given.utf8)
        var difference = left.count ^ right.count
        for index in 0..<max(left.count, right.count) {
            difference |= Int((index < left.count ? left[index] : 0) ^ (index < right.count ? right[index] : 0))
        }
        return difference == 0
    }
}
