import Foundation
import WebImage

/// A processing request once read (``RequestReader``): its path parsed and its signature
/// checked, its options read, its source judged, and what its answer depends on worked out.
/// Nothing in it has been fetched; every later stage takes it as it is.
struct ProxyRequest: Sendable {
    /// The URL to fetch, as the allow-list normalised it.
    var source: URL
    var options: ProcessingOptions
    /// The rule the result's format follows.
    var choice: OutputFormatRule
    /// The result's key in every tier: the source, the canonical options and the format rule
    /// (no signature, so rotating keys keeps the caches).
    var key: String
    /// The request headers the answer depends on (`Vary`); empty when none.
    var vary: [String]
    /// The conditional headers, as far as the server answers them.
    var conditions: Conditions
}

/// A request's conditional headers, as far as the server answers them: each validator only when
/// the server sends it, since an ETag never sent cannot be matched.
struct Conditions: Sendable {
    var ifNoneMatch: String?
    var ifModifiedSince: String?

    /// A request's `If-None-Match` and `If-Modified-Since`, each kept when the server sends its
    /// validator.
    init(ifNoneMatch: String?, ifModifiedSince: String?, answeredBy configuration: ImageServerConfiguration) {
        self.ifNoneMatch = configuration.usesETag ? ifNoneMatch : nil
        self.ifModifiedSince = configuration.usesLastModified ? ifModifiedSince : nil
    }

    /// Whether an answer with these validators is a 304 (RFC 9110 13.2.2): `If-None-Match` when
    /// there is one, else `If-Modified-Since` against the `Last-Modified` sent.
    func notModified(etag: String, lastModified: String?) -> Bool {
        if let ifNoneMatch { return Self.matches(ifNoneMatch, etag) }
        guard let since = ifModifiedSince.flatMap(HTTPDate.parse), let modified = lastModified.flatMap(HTTPDate.parse) else {
            return false
        }
        return modified <= since
    }

    /// Whether an `If-None-Match` list names `etag` (or is `*`); weak forms compare equal.
    static func matches(_ ifNoneMatch: String, _ etag: String) -> Bool {
        ifNoneMatch.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }
}
