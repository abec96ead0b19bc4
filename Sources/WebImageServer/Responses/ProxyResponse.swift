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
    /// Where the answer came from, for the access log and the request's span; nil for a refusal.
    var tier: CacheTier?

    /// A response.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.init(status: status, headers: headers, body: body, tier: nil)
    }

    init(status: Int, headers: [(name: String, value: String)] = [], body: Data = Data(), tier: CacheTier?) {
        self.status = status
        self.headers = headers
        self.body = body
        self.tier = tier
    }

    /// The value of the first header called `name`, compared without case.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}
