import Foundation

/// The rules of a `robots.txt` for one crawler, as RFC 9309 reads them: the group whose
/// `user-agent` matches the crawler's product token (case-insensitive; several matching groups
/// merge), else the `*` group, else no rule at all. A path is allowed unless its longest
/// matching rule is a `disallow` (an `allow` of the same length wins); `*` matches any run of
/// characters and a final `$` the end. `crawl-delay` (not in the RFC, but what crawlers honour)
/// is kept from the same group.
public struct RobotsRules: Equatable, Sendable {
    /// An `allow` or `disallow` line.
    public struct Rule: Equatable, Sendable {
        /// Whether it is an `allow`.
        public var allows: Bool
        /// The pattern as written.
        public var pattern: String
        /// The pattern's literal runs between its `*`s, and whether it ends with `$`: split once
        /// when the file is read, not at every check.
        let segments: [[UInt8]]
        let anchored: Bool

        /// A rule of `pattern`.
        public init(allows: Bool, pattern: String) {
            self.allows = allows
            self.pattern = pattern
            var bytes = Array(pattern.utf8)
            anchored = bytes.last == UInt8(ascii: "$")
            if anchored { bytes.removeLast() }
            segments = bytes.split(separator: UInt8(ascii: "*"), omittingEmptySubsequences: false).map(Array.init)
        }
    }

    /// The rules of the groups that apply, in the file's order.
    public var rules: [Rule] = []
    /// Seconds between two requests to the host, from `crawl-delay`.
    public var crawlDelay: Double?
    /// Why everything is refused (the file could not be had: RFC 9309 2.3.1.4), or nil.
    public var refusesAll: String?

    /// Rules as given; none allows everything.
    public init(rules: [Rule] = [], crawlDelay: Double? = nil, refusesAll: String? = nil) {
        self.rules = rules
        self.crawlDelay = crawlDelay
        self.refusesAll = refusesAll
    }

    /// No rule: everything allowed (no `robots.txt`, a 4xx, or no group for us).
    public static let allowAll = RobotsRules()

    /// The longest line read, and the longest path judged, in bytes: Google's robots.txt parser's
    /// `kMaxLineLen` (2083 * 8), past which it cuts a line. A longer path is refused by a host that
    /// has rules (a cut path could escape a `$` rule), so no check costs more than this times the
    /// rules, whatever a file or a list holds.
    public static let maximumLineBytes = 2083 * 8

    /// The rules of `text` for the crawler whose product token is `agent`.
    public static func parse(_ text: String, agent: String) -> RobotsRules {
        struct Group {
            var agents: [String] = []
            var rules: [Rule] = []
            var crawlDelay: Double?
        }
        var groups: [Group] = []
        var current: Group?
        var lastWasAgent = false
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let line =
                rawLine.utf8.count > maximumLineBytes
                ? Substring(String(decoding: rawLine.utf8.prefix(maximumLineBytes), as: UTF8.self)) : rawLine
            let content = line.prefix { $0 != "#" }
            guard let colon = content.firstIndex(of: ":") else { continue }
            let key = content[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = content[content.index(after: colon)...].trimmingCharacters(in: .whitespaces)
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
    public func allows(_ path: String) -> Bool {
        guard refusesAll == nil else { return false }
        if path == "/robots.txt" || rules.isEmpty { return true }
        let text = Array(path.utf8)
        guard text.count <= Self.maximumLineBytes else { return false }
        var best: Rule?
        for rule in rules where Self.matches(rule, text) {
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

    /// Whether `pattern` (with `*` and a final `$`) matches the start of `path`.
    public static func matches(_ pattern: String, _ path: String) -> Bool {
        matches(Rule(allows: true, pattern: pattern), Array(path.utf8))
    }

    /// Whether `rule` matches the start of `text`, in time linear in the two: the first literal
    /// run is a prefix, each run between `*`s is found at its leftmost place after the one before
    /// (leftmost is never worse when only `*` is a wildcard), and the last is found after them, or
    /// with `$` ends the text. Each search is Knuth-Morris-Pratt's, so no byte of the text is read
    /// twice by one search: a backtracking matcher took O(pattern x path), 87 s for a hostile host.
    static func matches(_ rule: Rule, _ text: [UInt8]) -> Bool {
        let segments = rule.segments
        let first = segments[0]
        guard text.count >= first.count, text[..<first.count].elementsEqual(first) else { return false }
        if segments.count == 1 { return !rule.anchored || text.count == first.count }
        var position = first.count
        for segment in segments.dropFirst().dropLast() where !segment.isEmpty {
            guard let found = firstIndex(of: segment, in: text, from: position) else { return false }
            position = found + segment.count
        }
        let last = segments[segments.count - 1]
        if rule.anchored { return text.count - position >= last.count && text.suffix(last.count).elementsEqual(last) }
        return last.isEmpty || firstIndex(of: last, in: text, from: position) != nil
    }

    /// The first place at or after `start` where `needle` (not empty) stands in `text`.
    private static func firstIndex(of needle: [UInt8], in text: [UInt8], from start: Int) -> Int? {
        guard text.count - start >= needle.count else { return nil }
        var failure = [Int](repeating: 0, count: needle.count)
        var matched = 0
        for index in 1..<max(needle.count, 1) {
            while matched > 0 && needle[index] != needle[matched] { matched = failure[matched - 1] }
            if needle[index] == needle[matched] { matched += 1 }
            failure[index] = matched
        }
        matched = 0
        for index in start..<text.count {
            while matched > 0 && text[index] != needle[matched] { matched = failure[matched - 1] }
            if text[index] == needle[matched] { matched += 1 }
            if matched == needle.count { return index - needle.count + 1 }
        }
        return nil
    }
}
