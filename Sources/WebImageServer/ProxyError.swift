public import HTTPTypes

/// Why the proxy refused or failed a request: the HTTP status it answers with and a one-line
/// reason that names the option, the limit or the source at fault. The reason is the response
/// body, so a developer sees what to fix; it never carries a stack trace or a server path.
public struct ProxyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The status the response carries (4xx for the client's mistakes, 502/504 for the
    /// source's, 503 when the server is full).
    public var status: HTTPResponse.Status
    /// One line saying what was wrong.
    public var reason: String
    /// Seconds a client should wait before trying again (503 only).
    public var retryAfter: Int?
    /// For a source that could not be fetched, what went wrong (`http_404`, `timedOut`): the
    /// `kind` of `webimage_server_source_errors_total`.
    var sourceFailure: String?
    /// Headers the answer carries besides the reason's (`Allow` on a 405).
    var headers = HTTPFields()

    /// Creates an error.
    public init(status: Int, _ reason: String, retryAfter: Int? = nil) {
        self.status = HTTPResponse.Status(code: status)
        self.reason = reason
        self.retryAfter = retryAfter
    }

    public var description: String { "\(status.code) \(reason)" }

    /// 400: the URL or an option is malformed.
    static func badRequest(_ reason: String) -> ProxyError { ProxyError(status: 400, reason) }
    /// 403: the signature, a bucket's rules or the expiry does not allow the request.
    static func forbidden(_ reason: String) -> ProxyError { ProxyError(status: 403, reason) }
    /// 404: no route, no such source.
    static func notFound(_ reason: String) -> ProxyError { ProxyError(status: 404, reason) }
    /// 404: a source the server will not fetch: not on the allowed list, at an address the policy
    /// refuses, or redirecting to one; as imgproxy v4 answers them (`security/errors.go`'s
    /// `SourceURLError`, `generichttp/errors.go`'s `SourceAddressError`).
    static func refusedSource(_ reason: String) -> ProxyError { ProxyError(status: 404, reason) }
    /// 422: the source is larger than the byte limit (imgproxy v4's `imagedata/errors.go`
    /// `FileSizeError`).
    static func tooLarge(_ reason: String) -> ProxyError { ProxyError(status: 422, reason) }
    /// 415: the source is not an image the server can read.
    static func unsupported(_ reason: String) -> ProxyError { ProxyError(status: 415, reason) }
    /// 422: the source is an image, but not one that can be decoded or processed.
    static func unprocessable(_ reason: String) -> ProxyError { ProxyError(status: 422, reason) }
}
