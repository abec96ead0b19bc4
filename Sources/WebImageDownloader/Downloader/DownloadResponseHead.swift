/// The status and headers of a download's response, as a response modifier and a decryptor
/// see them.
public struct DownloadResponseHead: Sendable, HTTPHeaderLookup {
    /// The status code.
    public var statusCode: Int
    /// The headers, in order.
    public var headers: [(name: String, value: String)]

    /// Creates a response head.
    public init(statusCode: Int, headers: [(name: String, value: String)]) {
        self.statusCode = statusCode
        self.headers = headers
    }
}

/// The head of a 304, attached to `WebImageError.Code.notModified` as its underlying error, so
/// that a cache can refresh the stored copy's freshness from the new `Cache-Control`, `Date`
/// and `Age`.
package struct NotModifiedResponse: Error, Sendable {
    /// The 304's status and headers.
    public let head: DownloadResponseHead
}
