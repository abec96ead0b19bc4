#if Vapor
public import Vapor
public import WebImageServer

/// Mounts an ``ImageProxy`` in a Vapor application under a path prefix, as
/// ``ImageProxyMiddleware`` does in a Hummingbird one: `GET` and `HEAD` requests below the prefix
/// are the proxy's (imgproxy's URLs, `/info/` included) with the same configuration, signing,
/// limits, result cache and admission as `webimage serve`; everything else goes on to the
/// application's routes.
///
/// ```swift
/// let proxy = try app.makeImageProxy(configuration: configuration)
/// app.middleware.use(ImageProxyVaporMiddleware(proxy: proxy, prefix: "/images"))
/// ```
///
/// Vapor answers a `HEAD` with the `GET`'s head and no body.
public struct ImageProxyVaporMiddleware: AsyncMiddleware {
    /// The proxy that answers.
    public let proxy: ImageProxy
    /// Where its paths start, such as `/images`; empty for every path.
    public let prefix: String

    /// A middleware answering the paths under `prefix` with `proxy`.
    public init(proxy: ImageProxy, prefix: String = "") {
        self.proxy = proxy
        self.prefix = prefix
    }

    /// Answers a `GET` or `HEAD` under the prefix; hands anything else on.
    public func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard request.method == .GET || request.method == .HEAD,
            let path = ImageServer.removingPrefix(prefix, from: Substring(request.url.path))
        else { return try await next.respond(to: request) }
        let answer = await proxy.answer(to: VaporHead(request: request), path: path, connectionClosed: nil)
        var headers = HTTPHeaders(answer.headers.map { ($0.name, $0.value) })
        headers.add(name: ImageProxy.contentSecurityPolicyHeader.name, value: ImageProxy.contentSecurityPolicyHeader.value)
        return Response(status: HTTPResponseStatus(statusCode: answer.status), headers: headers, body: Response.Body(data: answer.body))
    }
}

/// A Vapor request's head as the proxy reads it.
private struct VaporHead: ProxyRequestHead {
    let request: Request

    var method: String { request.method.rawValue }
    var hasQuery: Bool { request.url.query != nil }

    func value(of field: ProxyRequestField) -> String? {
        request.headers.first(name: field.name)
    }
}
#endif
