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
