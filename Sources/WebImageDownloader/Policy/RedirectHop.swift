public import Foundation

/// One redirect the downloader is about to follow, for
/// ``ImageDownloaderConfiguration/redirectHandler``.
public struct RedirectHop: Sendable, Hashable {
    /// The URL that answered with the redirect.
    public let from: URL
    /// Where its `Location` leads, resolved against ``from``.
    public let to: URL
    /// The redirect's status: 301, 302, 303, 307 or 308.
    public let statusCode: Int
    /// Which hop this is, from 1.
    public let number: Int

    /// Creates a hop.
    public init(from: URL, to: URL, statusCode: Int, number: Int) {
        self.from = from
        self.to = to
        self.statusCode = statusCode
        self.number = number
    }
}

/// What to do with a redirect hop.
public enum RedirectDecision: Sendable, Hashable {
    /// Follow it.
    case follow
    /// Do not follow it: the load fails with `WebImageError.Code.rejected`.
    case refuse
    /// Go to this URL instead (it counts as the same hop).
    case rewrite(URL)
}

/// How one hop changes the request, as browsers and curl do (RFC 9110 15.4): 303 turns anything
/// but `HEAD` into a `GET` without a body, and so do 301 and 302 for a `POST`; 307 and 308 keep
/// the method and body. Credentials set by the caller (`Authorization`, `Cookie`) are not sent
/// to another origin.
struct RedirectRule {
    static let statuses: Set<Int> = [301, 302, 303, 307, 308]

    /// The target of a redirect response, resolved against the URL that sent it; nil when the
    /// status is not a redirect or `Location` is missing or not an HTTP(S) URL.
    static func target(status: Int, location: String?, from url: URL) -> URL? {
        guard statuses.contains(status), let location = location?.trimmingCharacters(in: .whitespaces), !location.isEmpty,
            let target = URL(string: location, relativeTo: url)?.absoluteURL,
            ["http", "https"].contains(target.scheme?.lowercased() ?? "")
        else { return nil }
        return target
    }

    /// The request for the next hop.
    static func follow(_ request: DownloadRequest, to target: URL, status: Int) -> DownloadRequest {
        var next = request
        next.url = target
        let method = request.method.uppercased()
        if (status == 303 && method != "HEAD") || ((status == 301 || status == 302) && method == "POST") {
            next.method = "GET"
            next.body = nil
            next.headers.removeAll { ["content-type", "content-length"].contains($0.name.lowercased()) }
        }
        if !sameOrigin(request.url, target) {
            next.headers.removeAll { ["authorization", "cookie"].contains($0.name.lowercased()) }
        }
        return next
    }

    /// Where a redirect leads once the limit, the handler and the cycle check have had their say:
    /// the target (possibly rewritten by the handler), or the error that ends the attempt.
    /// `redirects` is how many hops were followed before this one; `visited`, the URLs that
    /// redirected so far (without `from`).
    static func judge(
        from: URL, to target: URL, status: Int, redirects: Int, visited: [URL], limit: Int, original: URL,
        handler: (@Sendable (RedirectHop) -> RedirectDecision)?
    ) -> Result<URL, WebImageError> {
        guard redirects < limit else {
            return .failure(WebImageError(.tooManyRedirects, "\(original.absoluteString) redirected more than \(limit) times"))
        }
        var target = target
        if let handler {
            switch handler(RedirectHop(from: from, to: target, statusCode: status, number: redirects + 1)) {
            case .follow: break
            case .refuse:
                return .failure(
                    WebImageError(
                        .rejected, "the redirect handler refused \(from.absoluteString) → \(target.absoluteString)",
                        refusal: .redirect(from: from.absoluteString, to: target.absoluteString)))
            case .rewrite(let rewritten): target = rewritten
            }
        }
        guard !(visited + [from]).contains(target) else {
            return .failure(WebImageError(.tooManyRedirects, "\(target.absoluteString) redirects in a cycle"))
        }
        return .success(target)
    }

    static func sameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
        lhs.scheme?.lowercased() == rhs.scheme?.lowercased() && lhs.host?.lowercased() == rhs.host?.lowercased()
            && lhs.effectivePort == rhs.effectivePort
    }
}

extension URL {
    /// The port a connection to this URL goes to: the explicit one, else the scheme's.
    var effectivePort: Int {
        port ?? (scheme?.lowercased() == "https" ? 443 : 80)
    }
}
