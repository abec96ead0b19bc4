import Foundation
import Hummingbird
import HTTPTypes
import Logging
import Tracing
import WebImage

/// What every answer of ``ImageServer`` carries, whichever route made it: the request's id,
/// `nosniff`, HTTP/1.0's `Connection: close`, and one log line. Outermost, so that an error a
/// route throws (an ``HTTPResponseError``) is stamped and logged like any answer.
struct ResponseStampMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        // From the head's arrival on the connection where the server stamped it, else from here.
        let start = request.headers[HeaderName.arrival].flatMap(UInt64.init) ?? DispatchTime.now().uptimeNanoseconds
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        // An HTTP/1.0 request without keep-alive (ProxyHTTP1Channel marked it) closes after its answer.
        if request.headers[.connection]?.lowercased() == "close" { response.headers[.connection] = "close" }
        response.headers.append(HTTPField(name: HeaderName.requestID, value: context.id))
        // Every body is what its Content-Type says: a browser must not guess HTML into an error's text.
        response.headers.append(HTTPField(name: HeaderName.contentTypeOptions, value: "nosniff"))
        // Made only when the line is logged (the metadata is an autoclosure): at --log-level
        // warning a result-cache hit pays nothing for it.
        context.logger.info("request", metadata: Self.accessFields(request, response, access: context.access.facts, since: start))
        return response
    }

    /// Whole milliseconds from `start` (the monotonic clock's nanoseconds) to now.
    static func milliseconds(since start: UInt64) -> UInt64 {
        let now = DispatchTime.now().uptimeNanoseconds
        return now > start ? (now - start) / 1_000_000 : 0
    }

    /// The access line's fields: the path without its signature, and the cache tier of a proxy answer.
    private static func accessFields(
        _ request: Request, _ response: Response, access: AccessRecord.Facts, since start: UInt64
    )
        -> Logger.Metadata
    {
        var fields: Logger.Metadata = [
            "method": "\(request.method.rawValue)", "path": "\(loggedPath(request, access))",
            "status": "\(response.status.code)", "bytes": "\(response.body.contentLength ?? 0)",
            "ms": "\(Self.milliseconds(since: start))",
        ]
        if let tier = access.tier { fields["cache"] = "\(tier.rawValue)" }
        return fields
    }
}

/// A request's path as logs and spans show it: a proxy path under its prefix, without its
/// signature and its source's user, password and query (``ImageProxy/loggablePath(_:)``); any
/// other path as it came; at most 200 characters of either. Worked out only when a line is logged
/// or a span is kept.
func loggedPath(_ request: Request, _ access: AccessRecord.Facts) -> String {
    guard let path = access.proxyPath else { return String(request.uri.path.prefix(200)) }
    return String((access.prefix + ImageProxy.loggablePath(path)).prefix(200))
}

/// A server span per request, continuing the trace an incoming `traceparent` names (W3C Trace
/// Context, through the tracer's propagator): everything the request does is beneath it, and
/// its log lines carry its trace id. Outermost, and only added when a tracer is set.
struct RequestTracingMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let tracer: any Tracer

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var incoming = ServiceContext.topLevel
        tracer.extract(request.headers, into: &incoming, using: HTTPFieldsExtractor())
        let span = tracer.startSpan(request.method.rawValue, context: incoming, ofKind: .server)
        defer { span.end() }
        span.attributes["http.request.method"] = request.method.rawValue
        let response: Response
        do {
            response = try await ServiceContext.withValue(span.context) { try await next(request, context) }
        } catch {
            span.fail(error)
            throw error
        }
        // The path without its signature, its source redacted: a trace store is no place for a
        // key to a signed URL, nor for a source's credentials or tokens.
        span.attributes["url.path"] = loggedPath(request, context.access.facts)
        let access = context.access.facts
        span.attributes["http.response.status_code"] = Int(response.status.code)
        if let tier = access.tier { span.attributes["webimage.cache"] = tier.rawValue }
        if response.status.code >= 500 { span.setStatus(SpanStatus(code: .error)) }
        return response
    }
}

/// Reads a trace's propagation headers from a request's, within W3C Trace Context's limits: one
/// `traceparent` (a request with several names no parent: which would be the one?), and a
/// `tracestate` of at most 32 members and 512 characters, cut as the specification says (members
/// over 128 characters go first, then members from the end). What is kept is forwarded to
/// origins and written into every span, so a client's 17 KB of members must not be.
struct HTTPFieldsExtractor: Extractor {
    func extract(key: String, from headers: HTTPFields) -> String? {
        guard let name = HTTPField.Name(key) else { return nil }
        let values = headers[values: name]
        switch key.lowercased() {
        case "traceparent": return values.count == 1 ? values[0] : nil
        case "tracestate": return values.isEmpty ? nil : Self.limitedTraceState(values.joined(separator: ","))
        default: return headers[name]
        }
    }

    /// The most members and characters of a `tracestate` kept (W3C Trace Context, 3.3.1.1 and 3.3.1.5).
    static let maximumMembers = 32
    static let maximumCharacters = 512

    static func limitedTraceState(_ text: String) -> String? {
        var members = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if members.count > maximumMembers { members.removeLast(members.count - maximumMembers) }
        func length() -> Int { members.reduce(0) { $0 + $1.count } + max(members.count - 1, 0) }
        if length() > maximumCharacters { members.removeAll { $0.count > 128 } }
        while length() > maximumCharacters { members.removeLast() }
        return members.isEmpty ? nil : members.joined(separator: ",")
    }
}

/// What the proxy tells the outer middleware about an answer: the path as it may be logged (a
/// proxy path without its signature) and where the answer came from. Written by the proxy's
/// middleware and read by the outer ones after it, in one request's task; behind a lock because
/// the context that holds it must be `Sendable` (``Locked``, which ThreadSanitizer sees, where
/// `Synchronization.Mutex` locks with futex calls it cannot: two allocations more per request).
final class AccessRecord: Sendable {
    struct Facts: Sendable {
        /// The proxy path under the mount prefix, signature and all; nil for another route.
        var proxyPath: Substring?
        var prefix = ""
        var tier: CacheTier?
    }

    private let state = Locked(Facts())

    var facts: Facts { state.withLock { $0 } }

    func record(proxyPath: Substring, prefix: String, tier: CacheTier?) {
        state.withLock { $0 = Facts(proxyPath: proxyPath, prefix: prefix, tier: tier) }
    }
}

/// The methods the server takes: `GET` and `HEAD` go on to the routes; `OPTIONS` (a CORS
/// preflight, or a client asking) is answered 200 on any path, as imgproxy answers it; any other
/// method is a 405 that says which ones are allowed.
struct MethodMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    /// imgproxy's CORS headers, sent with the preflight's answer too.
    let corsHeaders: [(name: String, value: String)]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        switch request.method {
        case .get, .head:
            return try await next(request, context)
        case .options:
            return ProxyResponse(status: 200, headers: [("Allow", Self.allowed)] + corsHeaders).hummingbirdResponse
        default:
            var refusal = ProxyError(status: 405, "use GET or HEAD")
            refusal.headers[.allow] = Self.allowed
            throw refusal
        }
    }

    private static let allowed = "GET, HEAD, OPTIONS"
}

/// The innermost middleware: reached only by a path outside the prefix, which no route and not
/// the proxy takes.
struct UnroutedMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let prefix: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        throw ProxyError.notFound("no route here: every path starts with \(prefix)")
    }
}
