/// One request as the ``OriginServer`` received it.
public struct OriginRequest: Sendable {
    /// The request method, such as `GET`.
    public let method: String
    /// The request target as sent, with its query.
    public let uri: String
    /// The headers as sent, in order.
    public let headers: [(name: String, value: String)]
    /// The request body as received (empty for none).
    public let body: [UInt8]
    /// Identifies the TCP connection the request came on: requests with the same id shared a
    /// connection.
    public let connectionID: Int
    /// Position in the server's request log, from 0.
    public let sequence: Int
    /// Position among the requests for the same path (query ignored), from 0.
    public let indexOnPath: Int

    /// The path without the query.
    public var path: String {
        Self.path(of: uri)
    }

    static func path(of uri: String) -> String {
        String(uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0])
    }

    /// The first value of a header, matched without regard to case.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}
