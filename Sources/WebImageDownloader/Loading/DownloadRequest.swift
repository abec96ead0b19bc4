public import Foundation

/// The request a download is about to send, as a request modifier sees and changes it.
public struct DownloadRequest: Sendable, HTTPHeaderLookup {
    /// The URL to fetch.
    public var url: URL
    /// The headers to send, in order.
    public var headers: [(name: String, value: String)]

    /// Creates a request.
    public init(url: URL, headers: [(name: String, value: String)]) {
        self.url = url
        self.headers = headers
    }
}
