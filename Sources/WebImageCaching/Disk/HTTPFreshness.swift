package import Foundation

/// How long a stored response may be used without asking the origin again (RFC 9111), from its
/// `Cache-Control`, `Expires`, `Date`, `Age` and `Last-Modified`; kept with the entry's
/// ``DiskCacheMetadata``. The manager consults it only with
/// `CacheFreshnessPolicy.respectCacheControl(now:)`; by default (SDWebImage's rule) a cached
/// image is used as it is.
package struct HTTPFreshness: Sendable, Hashable {
    /// Until when the response is fresh.
    public var freshUntil: Date
    /// How long past ``freshUntil`` it may still be served while it is revalidated behind
    /// (`stale-while-revalidate`); zero when the response gave none.
    public var staleWhileRevalidate: TimeInterval
    /// `must-revalidate` (or `no-cache`): once stale it is never served without asking.
    public var mustRevalidate: Bool
    /// The freshness lifetime the response's headers gave (before its age), which a 304 that
    /// carries no caching headers of its own renews.
    public var lifetime: TimeInterval

    /// Where a stored response stands at a moment.
    package enum State: Sendable, Hashable {
        /// Use it.
        case fresh
        /// Use it now and revalidate it in the background.
        case staleWhileRevalidate
        /// Revalidate it before use.
        case stale
    }

    /// Creates a freshness.
    public init(freshUntil: Date, staleWhileRevalidate: TimeInterval = 0, mustRevalidate: Bool = false, lifetime: TimeInterval = 0) {
        self.freshUntil = freshUntil
        self.staleWhileRevalidate = max(0, staleWhileRevalidate)
        self.mustRevalidate = mustRevalidate
        self.lifetime = lifetime
    }

    /// Where the response stands at `now`.
    public func state(at now: Date) -> State {
        if now < freshUntil { return .fresh }
        if !mustRevalidate, now < freshUntil.addingTimeInterval(staleWhileRevalidate) { return .staleWhileRevalidate }
        return .stale
    }

    /// The freshness of a response received at `receivedAt`, from its headers:
    ///
    /// - the lifetime is `max-age` (`s-maxage` is for shared caches and ignored here), else
    ///   `Expires` minus `Date`, else 10% of the time since `Last-Modified` (capped at a day, the
    ///   heuristic of RFC 9111 4.2.2 that browsers use), else zero;
    /// - its age at reception is `Age`, or the time since `Date` when larger;
    /// - `no-cache` makes it stale at once and `must-revalidate`; `immutable` changes nothing
    ///   here (a fresh response is never revalidated anyway).
    public init(
        cacheControl: String?, expires: String?, date: String?, age: String?, lastModified: String?, receivedAt: Date
    ) {
        let directives = Self.directives(cacheControl)
        let served = date.flatMap(HTTPDate.parse) ?? receivedAt
        var lifetime: TimeInterval
        if let maxAge = directives["max-age"]?.flatMap(TimeInterval.init) {
            lifetime = maxAge
        } else if let expires {
            // An Expires that does not parse (often "0" or "-1") means already expired.
            lifetime = HTTPDate.parse(expires).map { $0.timeIntervalSince(served) } ?? 0
        } else if let modified = lastModified.flatMap(HTTPDate.parse) {
            lifetime = min(86_400, max(0, served.timeIntervalSince(modified)) / 10)
        } else {
            lifetime = 0
        }
        let noCache = directives.keys.contains("no-cache")
        if noCache { lifetime = 0 }
        let currentAge = max(
            age.flatMap { TimeInterval($0.trimmingCharacters(in: .whitespaces)) } ?? 0, receivedAt.timeIntervalSince(served), 0)
        self.init(
            freshUntil: receivedAt.addingTimeInterval(lifetime - currentAge),
            staleWhileRevalidate: directives["stale-while-revalidate"]?.flatMap(TimeInterval.init) ?? 0,
            mustRevalidate: noCache || directives.keys.contains("must-revalidate") || directives.keys.contains("proxy-revalidate"),
            lifetime: lifetime
        )
    }

    /// The freshness after a 304 received at `receivedAt` (RFC 9111 4.3.4): from the 304's own
    /// caching headers when it has any, else this freshness's lifetime and directives, renewed.
    public func renewed(
        cacheControl: String?, expires: String?, date: String?, age: String?, lastModified: String?, receivedAt: Date
    ) -> HTTPFreshness {
        guard cacheControl == nil, expires == nil else {
            return HTTPFreshness(
                cacheControl: cacheControl, expires: expires, date: date, age: age, lastModified: lastModified, receivedAt: receivedAt)
        }
        var renewed = self
        renewed.freshUntil = receivedAt.addingTimeInterval(lifetime)
        return renewed
    }

    /// `Cache-Control`'s directives by lower-case name, with their values (quotes removed).
    static func directives(_ header: String?) -> [String: String?] {
        var result: [String: String?] = [:]
        for part in (header ?? "").split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1)
            let name = pair[0].trimmingCharacters(in: .whitespaces).lowercased()
            guard !name.isEmpty else { continue }
            let value = pair.count == 2 ? pair[1].trimmingCharacters(in: CharacterSet.whitespaces.union(["\""])) : nil
            result[name] = value
        }
        return result
    }
}
