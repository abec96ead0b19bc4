import Foundation
import WebImage

/// `X-Robots-Tag` as img2dataset reads it (its `is_disallowed`): each header value is either
/// `directive, directive` or `useragent: directive, directive`; a value refuses the image when
/// it names one of the disallowed directives and either names no user agent or names ours (the
/// `--user-agent-token`, compared lower-cased). Every `X-Robots-Tag` header counts.
struct RobotsTag {
    /// The directives that refuse (lower-cased).
    let disallowed: Set<String>
    /// Our user agent token (lower-cased), or nil.
    let token: String?

    /// The reason img2dataset records for a refusal.
    static let refusal = "Use of image disallowed by X-Robots-Tag directive"

    /// Whether a response with these headers refuses the image.
    func refuses(_ headers: [(name: String, value: String)]) -> Bool {
        guard !disallowed.isEmpty else { return false }
        return headers.contains { header in
            header.name.lowercased() == "x-robots-tag" && refuses(value: header.value)
        }
    }

    func refuses(value: String) -> Bool {
        let parts = value.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let agent = parts.count == 2 ? parts[0].lowercased() : nil
        let directives = (parts.last ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        return (agent == nil || agent == token) && directives.contains { disallowed.contains($0) }
    }
}
