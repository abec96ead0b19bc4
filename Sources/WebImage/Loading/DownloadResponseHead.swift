/// The status and headers of a download's response, as a response modifier and a decryptor
/// see them.
public struct DownloadResponseHead: Sendable {
    /// The status code.
    public var statusCode: Int
    /// The headers, in order.
    public var headers: [(name: String, value: String)]

    /// Creates a response head.
    public init(statusCode: Int, headers: [(name: String, value: String)]) {
        self.statusCode = statusCode
        self.headers = headers
    }

    /// The first value of a header, matched without regard to case.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}
