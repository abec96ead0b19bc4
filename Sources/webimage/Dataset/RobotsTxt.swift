import Foundation
import WebImage

/// The rules of a `robots.txt` for one crawler, as RFC 9309 reads them: the group whose
/// `user-agent` matches the crawler's product token (case-insensitive; several matching groups
/// merge), else the `*` group, else no rule at all. A path is allowed unless its longest
/// matching rule is a `disallow` (an `allow` of the same length wins); `*` matches any run of
/// characters and a final `$` the end. `crawl-delay` (not in the RFC, but what crawlers honour)
/// is kept from the same group.
struct RobotsRules: Equatable, Sendable {
    struct Rule: Equatable, Sendable {
        var allows: Bool
        var pattern: String
    }

    var rules: [Rule] = []
    /// Seconds between two requests to the host, from `crawl-delay`.
    var crawlDelay: Double?
    /// Why everything is refused (the file could not be had: RFC 9309 2.3.1.4), or nil.
    var refusesAll: String?

    /// No rule: everything allowed (no `robots.txt`, a 4xx, or no group for us).
    static let allowAll = RobotsRules()

    /// The rules of `text` for the crawler whose product token is `agent`.
    static func parse(_ text: String, agent: String) -> RobotsRules {
        struct Group {
            var agents: [String] = []
            var rules: [Rule] = []
            var crawlDelay: Double?
        }
        var groups: [Group] = []
        var current: Group?
        var lastWasAgent = false
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let line = rawLine.prefix { $0 != "#" }
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            switch key {
            case "user-agent":
                if !lastWasAgent {
                    if let current { groups.append(current) }
                    current = Group()
                }
                current?.agents.append(value.lowercased())
                lastWasAgent = true
                continue
            case "allow", "disallow":
                // An empty disallow allows everything: no rule.
                if !value.isEmpty { current?.rules.append(Rule(allows: key == "allow", pattern: value)) }
            case "crawl-delay":
                current?.crawlDelay = Double(value).flatMap { $0 >= 0 && $0.isFinite ? $0 : nil }
            default:
                break
            }
            lastWasAgent = false
        }
        if let current { groups.append(current) }
        let token = agent.lowercased()
        var chosen = groups.filter { $0.agents.contains(token) }
        if chosen.isEmpty { chosen = groups.filter { $0.agents.contains("*") } }
        return RobotsRules(rules: chosen.flatMap(\.rules), crawlDelay: chosen.compactMap(\.crawlDelay).first)
    }

    /// Whether `path` (the URL's path and query, percent-encoded as sent) may be fetched.
    func allows(_ path: String) -> Bool {
        guard refusesAll == nil else { return false }
        if path == "/robots.txt" { return true }
        var best: Rule?
        for rule in rules where Self.matches(rule.pattern, path) {
            guard let chosen = best else {
                best = rule
                continue
            }
            if rule.pattern.utf8.count > chosen.pattern.utf8.count || (rule.pattern.utf8.count == chosen.pattern.utf8.count && rule.allows)
            {
                best = rule
            }
        }
        return best?.allows ?? true
    }

    /// Whether `pattern` (with `*` and a final `$`) matches the start of `path`, in linear time
    /// by the usual greedy wildcard scan.
    static func matches(_ pattern: String, _ path: String) -> Bool {
        var pattern = Array(pattern.utf8)
        let anchored = pattern.last == UInt8(ascii: "$")
        if anchored { pattern.removeLast() }
        let text = Array(path.utf8)
        var (p, t) = (0, 0)
        var star: (p: Int, t: Int)?
        while t < text.count {
            if p == pattern.count {
                if !anchored { return true }
            } else if pattern[p] == UInt8(ascii: "*") {
                star = (p, t)
                p += 1
                continue
            } else if pattern[p] == text[t] {
                p += 1
                t += 1
                continue
            }
            guard let last = star else { return false }
            star = (last.p, last.t + 1)
            p = last.p + 1
            t = last.t + 1
        }
        while p < pattern.count, pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.count
    }
}

/// `--respect-robots-txt`: each origin's `robots.txt` fetched once per run (the rows of a host
/// that arrive while it loads wait for it), and its `crawl-delay` kept between the starts of
/// two downloads from that host.
actor RobotsPolicy {
    private enum Entry {
        case loading([CheckedContinuation<RobotsRules, Never>])
        case loaded(RobotsRules)
    }

    private let loader: any ImageLoader
    private let agent: String
    private var entries: [String: Entry] = [:]
    private var nextStart: [String: ContinuousClock.Instant] = [:]

    /// The reason a refused row records.
    static let refusal = "Disallowed by robots.txt"

    /// The longest `crawl-delay` waited for, in seconds (Apache Nutch's `fetcher.max.crawl.delay`
    /// default): a host asking for more has its rows refused with the reason, rather than a run
    /// that waits for hours per download, or for ever (a finite `1e300` is a valid number).
    static let maximumCrawlDelay = 30.0

    /// `loader` fetches the files (it must accept `text/plain`); `agent` is the product token
    /// the groups are matched against.
    init(loader: any ImageLoader, agent: String) {
        self.loader = loader
        self.agent = agent
    }

    /// nil when `url` may be fetched now (after waiting out the host's crawl delay), else why not.
    func refusal(for url: URL) async -> String? {
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
