import Foundation

/// The header a trusted proxy names the client in (nginx's `real_ip_header`): only that one is
/// read, since a proxy passes the others on as the client sent them.
public enum ClientIPHeader: String, Sendable, CaseIterable {
    /// `X-Forwarded-For`, a list the proxy appends the peer it saw to (the shipped nginx tier's
    /// `proxy_add_x_forwarded_for`). The default.
    case forwardedFor = "x-forwarded-for"
    /// `X-Real-IP`, one address the proxy sets (nginx's `proxy_set_header X-Real-IP $remote_addr`).
    case realIP = "x-real-ip"
    /// `Forwarded` (RFC 7239), its `for=` parameters in order.
    case forwarded

    /// The addresses the header gives, in the order the hops added them (the last is the nearest).
    func hops(in forwarding: PageAccess.Forwarding) -> [String] {
        switch self {
        case .forwardedFor:
            return forwarding.forwardedFor.map { $0.split(separator: ",").map(String.init) } ?? []
        case .realIP:
            return forwarding.realIP.map { [$0] } ?? []
        case .forwarded:
            let elements = forwarding.forwarded?.split(whereSeparator: { $0 == "," || $0 == ";" }) ?? []
            return elements.compactMap { element in
                let pair = element.trimmingCharacters(in: .whitespaces)
                return pair.lowercased().hasPrefix("for=") ? String(pair.dropFirst(4)) : nil
            }
        }
    }
}
