/// How gently a downloader treats each host, for crawlers: a limit on downloads running at once
/// per host (on top of the global one), an optional rate of starts per host, and holding a
/// host's queued downloads while it asked to be left alone (`Retry-After` on a 429 or 503).
/// Hosts take turns for free slots, so one slow host does not starve the rest of a list.
///
/// A host is the URL's host name, in lower case, without the port; a download counts against
/// the host it was asked for, wherever redirects take it.
public struct HostPoliteness: Sendable, Hashable {
    /// Downloads running at once for one host. Default 6, as browsers allow per host.
    public var maximumConcurrentDownloadsPerHost: Int
    /// Downloads started per second for one host; nil, the default, sets no rate.
    public var requestsPerSecond: Double?
    /// Whether a host's 429 or 503 with `Retry-After` holds that host's queued downloads until
    /// then (the failed download's own retry already waits that long). Default true.
    public var honoursRetryAfter: Bool
    /// The longest hold a `Retry-After` causes. Default 5 minutes.
    public var maximumHold: Duration

    /// Creates a policy.
    public init(
        maximumConcurrentDownloadsPerHost: Int = 6, requestsPerSecond: Double? = nil, honoursRetryAfter: Bool = true,
        maximumHold: Duration = .seconds(300)
    ) {
        self.maximumConcurrentDownloadsPerHost = max(1, maximumConcurrentDownloadsPerHost)
        self.requestsPerSecond = requestsPerSecond.flatMap { $0 > 0 ? $0 : nil }
        self.honoursRetryAfter = honoursRetryAfter
        self.maximumHold = maximumHold
    }

    /// The least time between two starts for one host, from ``requestsPerSecond``.
    var startInterval: Duration? {
        requestsPerSecond.map { .nanoseconds(Int64(1e9 / $0)) }
    }
}

/// Waiting downloads kept per host, for ``HostPoliteness``: which may start next, given each
/// host's running count, its next allowed start and any hold. A pure value: the scheduler gives
/// it the time, so it is tested without clocks or sockets (`HostQueueTests`).
struct HostQueue {
    typealias Instant = ContinuousClock.Instant

    private struct Host {
        var waiting = DownloadQueue()
        var running = 0
        /// The earliest the next download may start: from the rate, or a hold.
        var notBefore: Instant?
    }

    let politeness: HostPoliteness
    private var hosts: [String: Host] = [:]
    /// Hosts in the order they take turns; the next search starts after the last one served.
    private var turns: [String] = []
    private var lastServed = -1

    init(_ politeness: HostPoliteness) {
        self.politeness = politeness
    }

    var isEmpty: Bool { hosts.values.allSatisfy { $0.waiting.isEmpty } }

    mutating func append(_ transfer: DownloadTransfer, priority: LoadRequestOptions.Priority, host: String) {
        if hosts[host] == nil {
            hosts[host] = Host()
            turns.append(host)
        }
        hosts[host]!.waiting.append(transfer, priority: priority)
    }

    @discardableResult
    mutating func remove(_ transfer: DownloadTransfer, host: String, now: Instant) -> Bool {
        let removed = hosts[host]?.waiting.remove(transfer) ?? false
        forgetIfIdle(host, now: now)
        return removed
    }

    mutating func move(_ transfer: DownloadTransfer, to priority: LoadRequestOptions.Priority, host: String) {
        hosts[host]?.waiting.move(transfer, to: priority)
    }

    /// The download to start now: among the hosts under their limit and past their
    /// `notBefore`, the one whose best waiting download has the highest priority, hosts taking
    /// turns among equals. Nil with the earliest instant something could start, when only time
    /// stands in the way; nil with nil when nothing can start until a download ends.
    mutating func next(lifo: Bool, now: Instant) -> (transfer: DownloadTransfer?, wake: Instant?) {
        var chosen: (index: Int, priority: Int)?
        var wake: Instant?
        for step in 0..<turns.count {
            let index = (lastServed + 1 + step) % turns.count
            let host = hosts[turns[index]]!
            guard let priority = host.waiting.highestPriority, host.running < politeness.maximumConcurrentDownloadsPerHost else { continue }
            if let notBefore = host.notBefore, notBefore > now {
                wake = min(wake ?? notBefore, notBefore)
                continue
            }
            if chosen == nil || priority > chosen!.priority { chosen = (index, priority) }
        }
        guard let chosen else { return (nil, wake) }
        let name = turns[chosen.index]
        lastServed = chosen.index
        let transfer = hosts[name]!.waiting.next(lifo: lifo)
        hosts[name]!.running += 1
        if let interval = politeness.startInterval { hosts[name]!.notBefore = now + interval }
        return (transfer, nil)
    }

    /// A started download of `host` ended.
    mutating func ended(host: String, now: Instant) {
        hosts[host]?.running -= 1
        forgetIfIdle(host, now: now)
    }

    /// Holds `host`'s waiting downloads until `instant` (capped by the policy's longest hold).
    mutating func hold(_ host: String, for duration: Duration, now: Instant) {
        guard politeness.honoursRetryAfter, hosts[host] != nil else { return }
        let until = now + min(duration, politeness.maximumHold)
        hosts[host]!.notBefore = max(hosts[host]!.notBefore ?? until, until)
    }

    /// Running downloads of `host`.
    func running(_ host: String) -> Int { hosts[host]?.running ?? 0 }

    /// A host with nothing waiting, nothing running and no wait still to come is dropped, so
    /// that a long crawl over many hosts does not keep them all.
    private mutating func forgetIfIdle(_ host: String, now: Instant) {
        guard let state = hosts[host], state.running == 0, state.waiting.isEmpty, (state.notBefore ?? now) <= now else { return }
        hosts[host] = nil
        if let index = turns.firstIndex(of: host) {
            turns.remove(at: index)
            if lastServed >= index { lastServed -= 1 }
        }
    }

    /// A host's key: its name in lower case, without the port.
    static func key(for transfer: DownloadTransfer) -> String {
        transfer.key.url.host?.lowercased() ?? ""
    }
}
