public import Foundation
public import WebImage

/// `--respect-robots-txt`: each origin's `robots.txt` fetched once per run (the rows of a host
/// that arrive while it loads wait for it), and its `crawl-delay` kept between the starts of
/// two downloads from that host.
public actor RobotsPolicy {
    private enum Entry {
        case loading([CheckedContinuation<RobotsRules, Never>])
        case loaded(RobotsRules)
    }

    private let loader: any ImageLoader
    private let agent: String
    private var entries: [String: Entry] = [:]
    private var nextStart: [String: ContinuousClock.Instant] = [:]

    /// The reason a refused row records.
    public static let refusal = "Disallowed by robots.txt"

    /// The longest `crawl-delay` waited for, in seconds (Apache Nutch's `fetcher.max.crawl.delay`
    /// default): a host asking for more has its rows refused with the reason, rather than a run
    /// that waits for hours per download, or for ever (a finite `1e300` is a valid number).
    public static let maximumCrawlDelay = 30.0

    /// `loader` fetches the files (it must accept `text/plain`); `agent` is the product token
    /// the groups are matched against.
    public init(loader: any ImageLoader, agent: String) {
        self.loader = loader
        self.agent = agent
    }

    /// nil when `url` may be fetched now (after waiting out the host's crawl delay), else why not.
    /// The path is matched in the caller's task, not on this actor, which every row of every host
    /// goes through: a host with costly rules slows its own rows only.
    public nonisolated func refusal(for url: URL) async -> String? {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", let host = url.host else { return nil }
        let origin = "\(scheme)://\(host.lowercased())\(url.port.map { ":\($0)" } ?? "")"
        let rules = await rules(for: origin)
        var path = url.path.isEmpty ? "/" : url.path
        if let query = url.query { path += "?" + query }
        if let reason = rules.refusesAll { return "\(Self.refusal): \(reason)" }
        guard rules.allows(path) else { return Self.refusal }
        if let delay = rules.crawlDelay, delay > 0 {
            guard delay <= Self.maximumCrawlDelay else {
                return "\(Self.refusal): its crawl-delay of \(delay) s is above \(Int(Self.maximumCrawlDelay)) s"
            }
            await waitTurn(origin, delay: delay)
        }
        return nil
    }

    private func rules(for origin: String) async -> RobotsRules {
        switch entries[origin] {
        case .loaded(let rules):
            return rules
        case .loading(let waiting):
            return await withCheckedContinuation { continuation in entries[origin] = .loading(waiting + [continuation]) }
        case nil:
            entries[origin] = .loading([])
            let rules = await fetch(origin)
            if case .loading(let waiting) = entries[origin] { waiting.forEach { $0.resume(returning: rules) } }
            entries[origin] = .loaded(rules)
            return rules
        }
    }

    /// RFC 9309 2.3.1: a 2xx is parsed; a 4xx means no rules; a 5xx or no answer refuses the
    /// host for this run.
    private func fetch(_ origin: String) async -> RobotsRules {
        guard let url = URL(string: origin + "/robots.txt") else { return .allowAll }
        do {
            let loaded = try await loader.loadData(url)
            return RobotsRules.parse(String(decoding: loaded.data, as: UTF8.self), agent: agent)
        } catch {
            if let status = error.code.httpStatus, (400..<500).contains(status) { return .allowAll }
            return RobotsRules(refusesAll: "robots.txt unreachable (\(error.code))")
        }
    }

    /// Waits until `delay` seconds have passed since the last start given for `origin`.
    private func waitTurn(_ origin: String, delay: Double) async {
        let now = ContinuousClock.now
        let start = max(now, nextStart[origin] ?? now)
        nextStart[origin] = start + .milliseconds(Int64(delay * 1000))
        if start > now { try? await Task.sleep(until: start, clock: .continuous) }
    }
}
