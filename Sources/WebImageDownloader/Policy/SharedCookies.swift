import Foundation
import FoundationNetworking

/// ``LoadRequestOptions/handlesCookies`` (the manager's `.handleCookies`): cookies kept in Foundation's shared cookie storage, sent and stored as
/// URLSession would (each redirect hop's `Set-Cookie` stored before the next hop is sent).
enum SharedCookies {
    /// The `Cookie` header for `url` from the shared storage.
    static func headers(for url: URL) -> [(name: String, value: String)] {
        guard let cookies = HTTPCookieStorage.shared.cookies(for: url), !cookies.isEmpty else { return [] }
        return HTTPCookie.requestHeaderFields(with: cookies).map { ($0.key, $0.value) }
    }

    /// Keeps a response's cookies in the shared storage.
    static func store(from head: DownloadResponseHead, for url: URL) {
        let cookies = head.headers.filter { $0.name.lowercased() == "set-cookie" }.flatMap { header in
            HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": header.value], for: url)
        }
        if !cookies.isEmpty { HTTPCookieStorage.shared.setCookies(cookies, for: url, mainDocumentURL: nil) }
    }
}
