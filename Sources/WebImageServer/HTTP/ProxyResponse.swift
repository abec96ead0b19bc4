public import Foundation

/// What the proxy answers, before it is written to the wire: a status, headers and a body
/// (empty for `HEAD` and 304, with the headers a `GET` would have).
public struct ProxyResponse: Sendable {
    /// The HTTP status.
    public var status: Int
    /// Headers in order.
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: Data

    /// A response.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The value of the first header called `name`, compared without case.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}
