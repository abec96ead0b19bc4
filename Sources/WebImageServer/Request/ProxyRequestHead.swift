/// The parts of an HTTP request's head the proxy reads, whatever framework received it:
/// ``ImageProxyMiddleware`` gives Hummingbird's, and WebImageVapor's middleware Vapor's.
public protocol ProxyRequestHead {
    /// `GET` or `HEAD`.
    var method: String { get }
    /// Whether the request's target has a query string (the proxy refuses one).
    var hasQuery: Bool { get }
    /// The first value of a header the proxy reads, or nil.
    func value(of field: ProxyRequestField) -> String?
}

/// The request headers the proxy reads.
public enum ProxyRequestField: Sendable {
    case authorization
    case accept
    case ifNoneMatch
    case ifModifiedSince
    /// Client hints: `Sec-CH-DPR` and the older `DPR`, `Sec-CH-Width` and `Width`.
    case hintDPR
    case dpr
    case hintWidth
    case width

    /// The header's name as a request carries it.
    public var name: String {
        switch self {
        case .authorization: "Authorization"
        case .accept: "Accept"
        case .ifNoneMatch: "If-None-Match"
        case .ifModifiedSince: "If-Modified-Since"
        case .hintDPR: "Sec-CH-DPR"
        case .dpr: "DPR"
        case .hintWidth: "Sec-CH-Width"
        case .width: "Width"
        }
    }
}
