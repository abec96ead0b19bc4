import Foundation
public import Hummingbird
import HTTPTypes
import Metrics
import NIOCore
public import ServiceLifecycle
public import WebImage

/// The proxy on Hummingbird's types: what ``ImageServer``'s router and ``ImageProxyMiddleware``
/// both answer a proxy path with, so that a proxy mounted in another application behaves as the
/// server does.
extension ImageProxy {
    /// A proxy for an application of your own: mount it with ``ImageProxyMiddleware`` and run it
    /// as a service (``run()``), so that its caches are flushed when the application stops.
    /// - Throws: `WebImageError` when a cache directory cannot be opened, or
    ///   `WebImageError.Code.invalidArgument` for a configuration the proxy cannot run with
    ///   (neither a key nor `allowsUnsigned`, a preferred format it cannot write).
    public convenience init(configuration: ImageServerConfiguration, telemetry: Telemetry = .default) throws(WebImageError) {
        try self.init(
            configuration: configuration, telemetry: telemetry,
            metrics: ServerMetrics(factory: telemetry.metricsFactory ?? MetricsSystem.factory))
    }

    /// The answer to a `GET` or `HEAD` of a proxy path on Hummingbird's types
    /// (``answer(to:path:connectionClosed:)``).
    func response(to request: Request, path: Substring, connectionClosed: EventLoopFuture<Void>?) async -> (
        response: Response, tier: CacheTier?
    ) {
        let answer = await answer(to: HummingbirdHead(request: request), path: path, connectionClosed: connectionClosed)
        return (answer.hummingbirdResponse(adding: Self.contentSecurityPolicy), answer.tier)
    }

    /// The answer to a `GET` or `HEAD` of a proxy path (`path` is the request's path with any
    /// mount prefix removed), whatever framework received it: the secret and the query checked,
    /// `/info/` or processing, imgproxy's CORS headers. The body is a `GET`'s; whoever routes a
    /// `HEAD` drops it, once. The framework adds ``contentSecurityPolicyHeader``; an application
    /// mounts the proxy in a framework other than Hummingbird and Vapor through this method.
    public func answer(to request: some ProxyRequestHead, path: Substring, connectionClosed: EventLoopFuture<Void>?) async
        -> ProxyResponse
    {
        var answer: ProxyResponse
        let start = ContinuousClock.now
        // The signature does not cover a query: each one would be another key for the same image
        // in every cache in front. A source's own query is escaped inside the path.
        if let secret = configuration.secret, !ImageServer.constantTimeEqual(request.value(of: .authorization) ?? "", "Bearer " + secret) {
            answer = counted(
                errorResponse(.forbidden("the Authorization header does not carry the secret")), method: request.method, path: path,
                since: start)
        } else if request.hasQuery {
            answer = counted(
                errorResponse(.badRequest("a proxy URL takes no query string (escape a source's ? as %3F)")), method: request.method,
                path: path, since: start)
        } else if path.hasPrefix("/info/") {
            answer = await respondInfo(
                path: path.dropFirst("/info".count), ifNoneMatch: request.value(of: .ifNoneMatch), method: request.method,
                connectionClosed: connectionClosed)
        } else {
            var hints: OptionsParser.ClientHints?
            if configuration.enableClientHints {
                hints = OptionsParser.ClientHints(
                    dpr: [request.value(of: .hintDPR), request.value(of: .dpr)],
                    width: [request.value(of: .hintWidth), request.value(of: .width)])
            }
            answer = await respond(
                method: request.method, path: path, accept: request.value(of: .accept), ifNoneMatch: request.value(of: .ifNoneMatch),
                ifModifiedSince: request.value(of: .ifModifiedSince), hints: hints, connectionClosed: connectionClosed)
        }
        answer.headers += corsHeaders
        return answer
    }

    /// A proxy path as it may be logged or traced: without its signature, which is a key to the
    /// URL, and without its source's user, password and query (``ProxyPath/withoutSecrets(_:)``;
    /// `/info/` paths keep their `/info`).
    static func loggablePath(_ path: Substring) -> String {
        guard path.hasPrefix("/info/") else { return ProxyPath.withoutSecrets(String(withoutSignature(path))) }
        return "/info" + ProxyPath.withoutSecrets(String(withoutSignature(path.dropFirst("/info".count))))
    }

    /// The `Content-Security-Policy` every answer of ``answer(to:path:connectionClosed:)``
    /// carries (nothing loads from an image opened as a page, an SVG's scripts do not run): the
    /// framework that sends the answer adds it.
    public static let contentSecurityPolicyHeader = (name: "Content-Security-Policy", value: ResponseBuilder.contentSecurityPolicy)

    /// ``ResponseBuilder/contentSecurityPolicy`` as a field, made once: every answer carries it.
    static let contentSecurityPolicy = HTTPField(name: .contentSecurityPolicy, value: ResponseBuilder.contentSecurityPolicy)

    /// imgproxy's CORS headers, when an origin is configured.
    var corsHeaders: [(name: String, value: String)] {
        guard let origin = configuration.allowOrigin else { return [] }
        return [("Access-Control-Allow-Origin", origin), ("Access-Control-Allow-Methods", "GET, OPTIONS")]
    }
}

extension ImageProxy: Service {
    /// Waits for the service group's graceful shutdown, then flushes and closes the caches and the
    /// downloader. In a `ServiceGroup`, list the proxy before the HTTP application: the group stops
    /// services in reverse order, so the application drains its requests first.
    public func run() async throws {
        try? await gracefulShutdown()
        await shutdown()
    }
}

/// Mounts an ``ImageProxy`` in a Hummingbird application of your own, under a path prefix:
/// `GET` and `HEAD` requests below the prefix are the proxy's (imgproxy's URLs, `/info/` included),
/// everything else goes on to the application's routes.
///
/// ```swift
/// let proxy = try ImageProxy(configuration: configuration)
/// let router = Router()
/// router.get("/hello") { _, _ in "hello" }
/// router.add(middleware: ImageProxyMiddleware(proxy: proxy, prefix: "/images"))
/// let application = Application(router: router)
/// let group = ServiceGroup(services: [proxy, application], logger: logger)
/// ```
///
/// Add it before the routes it should come in front of: Hummingbird applies a middleware to the
/// routes added after it (and to paths no route matches).
public struct ImageProxyMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The proxy that answers.
    public let proxy: ImageProxy
    /// Where its paths start, such as `/images`; empty for every path.
    public let prefix: String
    /// The request's connection closing, which cancels a miss's work when its client goes away;
    /// nil where the context does not know its connection.
    let connectionClosed: @Sendable (Context) -> EventLoopFuture<Void>?
    /// Told each answer's path (under the prefix, signature and all) and tier, for the server's
    /// access line and span, which show it redacted (``ImageProxy/loggablePath(_:)``).
    let answered: @Sendable (Context, Substring, CacheTier?) -> Void

    /// A middleware answering the paths under `prefix` with `proxy`.
    public init(proxy: ImageProxy, prefix: String = "") {
        self.init(proxy: proxy, prefix: prefix, connectionClosed: { _ in nil }, answered: { _, _, _ in })
    }

    init(
        proxy: ImageProxy, prefix: String, connectionClosed: @escaping @Sendable (Context) -> EventLoopFuture<Void>?,
        answered: @escaping @Sendable (Context, Substring, CacheTier?) -> Void
    ) {
        self.proxy = proxy
        self.prefix = prefix
        self.connectionClosed = connectionClosed
        self.answered = answered
    }

    /// Answers a `GET` or `HEAD` under the prefix (a `HEAD` is the `GET`'s answer without its
    /// body, here and nowhere else); hands anything else on.
    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .get || request.method == .head,
            let path = ImageServer.removingPrefix(prefix, from: Substring(request.uri.path))
        else { return try await next(request, context) }
        let (response, tier) = await proxy.response(to: request, path: path, connectionClosed: connectionClosed(context))
        answered(context, path, tier)
        return request.method == .head ? response.createHeadResponse() : response
    }
}

/// A Hummingbird request's head as the proxy reads it; the names are made once (``HeaderName``).
private struct HummingbirdHead: ProxyRequestHead {
    let request: Request

    var method: String { request.method.rawValue }
    var hasQuery: Bool { request.uri.query != nil }

    func value(of field: ProxyRequestField) -> String? {
        switch field {
        case .authorization: request.headers[.authorization]
        case .accept: request.headers[.accept]
        case .ifNoneMatch: request.headers[.ifNoneMatch]
        case .ifModifiedSince: request.headers[.ifModifiedSince]
        case .hintDPR: request.headers[HeaderName.hintDPR]
        case .dpr: request.headers[HeaderName.dpr]
        case .hintWidth: request.headers[HeaderName.hintWidth]
        case .width: request.headers[HeaderName.width]
        }
    }
}

/// Header names read or written more than once, made once: checking and lowercasing a name on
/// every response cost 1% of a result-cache hit.
enum HeaderName {
    static let known: [String: HTTPField.Name] = [
        "ETag": .eTag, "Cache-Control": .cacheControl, "Vary": .vary, "Last-Modified": .lastModified,
        "Server-Timing": HTTPField.Name("Server-Timing")!, "Content-Type": .contentType, "Content-Length": .contentLength,
        "Content-Disposition": .contentDisposition, "Retry-After": .retryAfter, "Allow": .allow,
    ]
    static let forwarded = HTTPField.Name("Forwarded")!
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let realIP = HTTPField.Name("X-Real-IP")!
    static let contentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
    static let requestID = HTTPField.Name("X-Request-Id")!
    /// When the request's head was read off its connection (``RequestArrivalHandler``); never a
    /// client's: the handler replaces whatever came under this name.
    static let arrival = HTTPField.Name("X-Webimage-Arrival")!
    static let playgroundToken = HTTPField.Name("X-Playground-Token")!
    static let statusToken = HTTPField.Name("X-Status-Token")!
    static let hintDPR = HTTPField.Name("Sec-CH-DPR")!
    static let dpr = HTTPField.Name("DPR")!
    static let hintWidth = HTTPField.Name("Sec-CH-Width")!
    static let width = HTTPField.Name("Width")!
}

extension ProxyResponse {
    /// As Hummingbird writes it.
    var hummingbirdResponse: Response { hummingbirdResponse(adding: nil) }

    /// As Hummingbird writes it, with one more field made beforehand.
    func hummingbirdResponse(adding extra: HTTPField?) -> Response {
        var fields = HTTPFields()
        fields.reserveCapacity(headers.count + 1)
        for (name, value) in headers {
            if let field = HeaderName.known[name] ?? HTTPField.Name(name) { fields.append(HTTPField(name: field, value: value)) }
        }
        if let extra { fields.append(extra) }
        let body = body.isEmpty ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: body))
        return Response(status: HTTPResponse.Status(code: status), headers: fields, body: body)
    }
}

extension ProxyError: HTTPResponseError {
    /// The reason as the body, uncached (an error thrown by a route, not the proxy's own answer,
    /// which carries the configured error TTL).
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var fields: HTTPFields = [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"]
        fields.append(contentsOf: headers)
        if let retryAfter { fields[.retryAfter] = String(retryAfter) }
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: reason + "\n")))
    }
}
