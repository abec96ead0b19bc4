import WebImage

/// Who may use the playground. Its page signs any path with the node's key, which on the
/// internet would make the node a signing oracle: anyone could have it process anything. So it
/// answers clients on a loopback address only, unless a separate token is configured and the
/// client presents it. A request that came through a proxy (`Forwarded` or `X-Forwarded-For`,
/// which the nginx tier adds) is not a loopback client, whatever address it arrives from.
enum PageAccess {
    /// The verdict, with the reason a refusal gives.
    enum Decision: Equatable, Sendable {
        case allowed
        case refused(String)
    }

    /// The playground's rule.
    /// - Parameters:
    ///   - clientAddress: the peer's IP address as text, nil when unknown.
    ///   - forwarded: whether the request names a client beyond a proxy.
    ///   - token: the configured `--playground-token`, if any.
    ///   - presented: the token the request carries (query `token` or `X-Playground-Token`).
    static func playground(clientAddress: String?, forwarded: Bool, token: String?, presented: String?) -> Decision {
        if let token, let presented {
            return matches(token, presented) ? .allowed : .refused("the playground token is wrong")
        }
        if !forwarded, let clientAddress, isLoopback(clientAddress) { return .allowed }
        return .refused(
            token == nil
                ? "the playground answers loopback clients only; start the server with --playground-token to open it to others"
                : "the playground needs its token (?token=... or X-Playground-Token)")
    }

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
