/// A crawler's resolver: each name looked up once and its answer kept for a while, lookups of
/// different names at once, and one lookup of a name however many connections wait for it.
///
/// Why: a crawl opens connections to many thousands of hosts, and the system's resolver keeps
/// nothing (glibc has no cache), so each new connection costs a round trip to the DNS server,
/// hundreds of milliseconds when the server is slow or the name dead; img2dataset's documentation
/// asks its users to run a caching resolver for that reason. Kept here: answers for ``lifetime``
/// (5 minutes, a common TTL floor of public resolvers), failures for ``failureLifetime`` (1
/// minute: a name that did not resolve is not asked again for every one of its rows), at most
/// ``capacity`` names (expired ones go first, then all answers when it is still full).
public final class CachingHostResolver: HostResolver {
    private enum Entry {
        case resolved([IPAddress], until: ContinuousClock.Instant)
        case failed(HostResolutionError, until: ContinuousClock.Instant)
        /// The lookup in flight, which every waiter for the name awaits.
        case pending(Task<[IPAddress], any Error>)
    }

    /// What the table holds for a name: its answer, or the lookup to await.
    private enum Found {
        case answer([IPAddress])
        case lookup(Task<[IPAddress], any Error>)
    }

    /// The resolver that answers misses.
    public let upstream: any HostResolver
    /// How long an answer is kept. Default 5 minutes.
    public let lifetime: Duration
    /// How long a failed lookup is kept. Default 1 minute.
    public let failureLifetime: Duration
    /// The most names kept. Default 65,536.
    public let capacity: Int
    /// The time; the tests' own clock stands in for the system's.
    private let now: @Sendable () -> ContinuousClock.Instant
    /// A lock around the table alone: looking a name up in it is a dictionary access, and the
    /// lookups themselves run outside it.
    private let entries = Locked<[String: Entry]>([:])

    /// A cache over `upstream` (the system's resolver by default).
    public convenience init(
        upstream: any HostResolver = SystemHostResolver(), lifetime: Duration = .seconds(300), failureLifetime: Duration = .seconds(60),
        capacity: Int = 65_536
    ) {
        self.init(upstream: upstream, lifetime: lifetime, failureLifetime: failureLifetime, capacity: capacity, now: { .now })
    }

    package init(
        upstream: any HostResolver, lifetime: Duration, failureLifetime: Duration, capacity: Int,
        now: @escaping @Sendable () -> ContinuousClock.Instant
    ) {
        self.upstream = upstream
        self.lifetime = lifetime
        self.failureLifetime = failureLifetime
        self.capacity = max(1, capacity)
        self.now = now
    }

    public func addresses(of host: String) async throws -> [IPAddress] {
        let name = host.lowercased()
        // A kept answer is the lock and a lookup, nothing more; a miss joins or starts the lookup.
        let found = try entries.withLock { entries throws -> Found in
            let time = now()
            switch entries[name] {
            case .resolved(let addresses, let until) where until > time:
                return .answer(addresses)
            case .failed(let error, let until) where until > time:
                throw error
            case .pending(let task):
                return .lookup(task)
            default:
                let task = Task { [upstream] in try await upstream.addresses(of: host) }
                makeRoom(in: &entries, at: time)
                entries[name] = .pending(task)
                return .lookup(task)
            }
        }
        let lookup: Task<[IPAddress], any Error>
        switch found {
        case .answer(let addresses): return addresses
        case .lookup(let task): lookup = task
        }
        do {
            let addresses = try await lookup.value
            record(name, .resolved(addresses, until: now() + lifetime), replacing: lookup)
            return addresses
        } catch {
            let failure = error as? HostResolutionError ?? HostResolutionError(host: host, reason: "\(error)")
            record(name, .failed(failure, until: now() + failureLifetime), replacing: lookup)
            throw failure
        }
    }

    /// Puts the outcome of `lookup` in place of it (not of a newer lookup of the name).
    private func record(_ name: String, _ entry: Entry, replacing lookup: Task<[IPAddress], any Error>) {
        entries.withLock { entries in
            guard case .pending(let task) = entries[name], task == lookup else { return }
            entries[name] = entry
        }
    }

    /// Under the lock: when the table is full, drops the expired entries, then every answer.
    private func makeRoom(in entries: inout [String: Entry], at time: ContinuousClock.Instant) {
        guard entries.count >= capacity else { return }
        entries = entries.filter { _, entry in
            switch entry {
            case .resolved(_, let until), .failed(_, let until): until > time
            case .pending: true
            }
        }
        if entries.count >= capacity { entries = entries.filter { if case .pending = $0.value { true } else { false } } }
    }
}
