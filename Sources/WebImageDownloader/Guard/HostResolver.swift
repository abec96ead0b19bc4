import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Turns a host name into the addresses the address guard judges and connects to.
public protocol HostResolver: Sendable {
    /// The addresses of `host`, in the order to try them; throws when it has none.
    func addresses(of host: String) async throws -> [IPAddress]
}

/// The system's resolver (`getaddrinfo`: `/etc/hosts`, then DNS), each lookup on a thread of its
/// own (at most 64 at once), so that a slow lookup blocks no event loop, no
/// thread of the concurrency pool and no other lookup. (Not GCD's global queues: on Linux they
/// run about as many blocking jobs at once as there are cores and add a thread only when their
/// monitor sees the others blocked, about once a second, so a crawl's first few hundred lookups
/// behind a slow DNS server queued for seconds. Not NIO's singleton thread pool: it is never torn
/// down, and LeakSanitizer reports its queue at the exit of every process that started it. Not
/// the library's work pool either: a lookup can wait seconds for a DNS server, and would hold a
/// decode's slot all that time.)
public struct SystemHostResolver: HostResolver {
    /// Creates the resolver.
    public init() {}

    public func addresses(of host: String) async throws -> [IPAddress] {
        try await withCheckedThrowingContinuation { continuation in
            LookupThreads.run { continuation.resume(with: Result { try Self.lookUp(host) }) }
        }
    }

    static func lookUp(_ host: String) throws -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let first = list else {
            throw HostResolutionError(host: host, reason: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(first) }
        var addresses: [IPAddress] = []
        for entry in sequence(first: first, next: { $0.pointee.ai_next }) {
            guard let address = IPAddress(socketAddress: entry.pointee.ai_addr), !addresses.contains(address) else { continue }
            addresses.append(address)
        }
        return addresses
    }
}

/// Threads for blocking lookups: a thread per lookup (a lookup lasts milliseconds to seconds,
/// against tens of microseconds to start a thread), at most ``limit`` at once, the rest waiting
/// in arrival order. A thread ends with its lookup, so none is left at exit.
enum LookupThreads {
    static let limit = 64
    private struct State {
        var running = 0
        var waiting: [@Sendable () -> Void] = []
    }
    /// Around the count and the queue alone.
    private static let state = Locked(State())

    static func run(_ job: @escaping @Sendable () -> Void) {
        let starts = state.withLock { state in
            guard state.running < limit else {
                state.waiting.append(job)
                return false
            }
            state.running += 1
            return true
        }
        if starts { start(job) }
    }

    private static func start(_ job: @escaping @Sendable () -> Void) {
        let thread = Thread {
            var next: (@Sendable () -> Void)? = job
            while let current = next {
                current()
                next = state.withLock { state in
                    guard !state.waiting.isEmpty else {
                        state.running -= 1
                        return nil
                    }
                    return state.waiting.removeFirst()
                }
            }
        }
        thread.stackSize = 512 * 1024
        thread.start()
    }
}

/// Fixed answers for some names (curl's `--resolve`, AsyncHTTPClient's `dnsOverride`), and the
/// `fallback` resolver for the rest; without a fallback, other names do not resolve. The address
/// policy still judges every answer: pinning a name to a refused address does not allow it.
public struct StaticHostResolver: HostResolver {
    /// The fixed answers, by lower-case host name.
    public let entries: [String: [IPAddress]]
    /// The resolver for names not in ``entries``.
    public let fallback: (any HostResolver)?

    /// Creates a resolver with fixed answers, falling back to `fallback` (the system's by default).
    public init(_ entries: [String: [IPAddress]], fallback: (any HostResolver)? = SystemHostResolver()) {
        self.entries = Dictionary(entries.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.fallback = fallback
    }

    public func addresses(of host: String) async throws -> [IPAddress] {
        if let fixed = entries[host.lowercased()] { return fixed }
        guard let fallback else { throw HostResolutionError(host: host, reason: "no entry for this name") }
        return try await fallback.addresses(of: host)
    }
}

/// A name that did not resolve.
package struct HostResolutionError: Error, Sendable, CustomStringConvertible {
    /// The name looked up.
    public let host: String
    /// The resolver's reason.
    public let reason: String

    public var description: String { "cannot resolve \(host): \(reason)" }
}

extension IPAddress {
    /// The address of a `sockaddr_in` or `sockaddr_in6`; nil for other families.
    init?(socketAddress: UnsafePointer<sockaddr>?) {
        guard let socketAddress else { return nil }
        switch Int32(socketAddress.pointee.sa_family) {
        case AF_INET:
            let v4 = UnsafeRawPointer(socketAddress).loadUnaligned(as: sockaddr_in.self)
            self = .v4(UInt32(bigEndian: v4.sin_addr.s_addr))
        case AF_INET6:
            var v6 = UnsafeRawPointer(socketAddress).loadUnaligned(as: sockaddr_in6.self)
            self.init(bytes: withUnsafeBytes(of: &v6.sin6_addr) { Array($0) })
        default:
            return nil
        }
    }
}
