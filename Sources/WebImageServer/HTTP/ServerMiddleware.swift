import Foundation
import Hummingbird
import HTTPTypes

/// What every answer of ``ImageServer`` carries, whichever route made it: the request's id,
/// `nosniff`, HTTP/1.0's `Connection: close`, and one log line. Outermost, so that an error a
/// route throws (an ``HTTPResponseError``) is stamped and logged like any answer.
struct ResponseStampMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
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
        context.logger.info(
            "request",
            metadata: [
                "method": "\(request.method.rawValue)", "path": "\(request.uri.path.prefix(200))", "status": "\(response.status.code)",
                "bytes": "\(response.body.contentLength ?? 0)", "ms": "\(Int((ContinuousClock.now - start) / .milliseconds(1)))",
            ])
        return response
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
