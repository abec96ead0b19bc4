import Foundation
public import WebImage

/// `X-Robots-Tag` as img2dataset reads it (its `is_disallowed`): each header value is either
/// `directive, directive` or `useragent: directive, directive`; a value refuses the image when
/// it names one of the disallowed directives and either names no user agent or names ours (the
/// `--user-agent-token`, compared lower-cased). Every `X-Robots-Tag` header counts.
///
/// The header is kept with the bytes (the downloader's `retainedResponseHeaders`, and the cache
/// entry's metadata from there) and judged on every use of them, a cached copy's too: a copy
/// another run cached with other directives, or none, is refused as a download would be.
public struct RobotsTag: Sendable {
    /// The header's name, as retained (lower-cased).
    public static let headerName = "x-robots-tag"

    /// The directives that refuse (lower-cased).
    public let disallowed: Set<String>
    /// Our user agent token (lower-cased), or nil.
    public let token: String?

    /// The rule refusing `disallowed` (lower-cased, as ``refuses(value:)`` compares) for the
    /// crawler whose token is `token` (lower-cased).
    public init(disallowed: Set<String>, token: String?) {
        self.disallowed = disallowed
        self.token = token
    }

    /// The reason img2dataset records for a refusal.
    public static let refusal = "Use of image disallowed by X-Robots-Tag directive"

    /// Whether a load refuses the image by the headers kept with it (``headerName``).
    public func refuses(_ metadata: DiskCacheMetadata?) -> Bool {
        guard !disallowed.isEmpty else { return false }
        return (metadata?.retainedHeaders[Self.headerName] ?? []).contains { refuses(value: $0) }
    }

    /// Whether one header value refuses the image.
    public func refuses(value: String) -> Bool {
        let parts = value.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let agent = parts.count == 2 ? parts[0].lowercased() : nil
        let directives = (parts.last ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        return (agent == nil || agent == token) && directives.contains { disallowed.contains($0) }
    }
}
