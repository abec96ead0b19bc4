public import Foundation

/// The request a download is about to send, as a request modifier sees and changes it.
public struct DownloadRequest: Sendable, HTTPHeaderLookup {
    /// The URL to fetch.
    public var url: URL
    /// The headers to send, in order.
    public var headers: [(name: String, value: String)]
    /// The HTTP method.
    public var method: String
    /// The body to send, if any.
    public var body: Data?

    /// Creates a request.
    public init(url: URL, headers: [(name: String, value: String)], method: String = "GET", body: Data? = nil) {
        self.url = url
        self.headers = headers
        self.method = method
        self.body = body
    }
}
