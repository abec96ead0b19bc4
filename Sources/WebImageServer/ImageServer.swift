import Foundation
package import Hummingbird
public import Logging
import HummingbirdCore
import Metrics
package import NIOCore
public import Prometheus
public import ServiceLifecycle
public import Tracing
public import WebImage

/// The image proxy as a service: ``ImageProxy`` behind Hummingbird 2, with `/health`, `/ready`
/// and Prometheus `/metrics`. Run it in a `ServiceGroup` (``run()``), which
/// `webimage serve` does with SIGTERM and SIGINT as graceful shutdown: the listener closes,
/// requests in flight finish, then the caches are flushed.
///
/// ```swift
/// var configuration = ImageServerConfiguration()
/// configuration.signingKeys = [SigningKey(hexKey: "736563726574", hexSalt: "68656C6C6F")!]
/// let server = try ImageServer(configuration: configuration)
/// try await server.run()
/// ```
public final class ImageServer: Service, Sendable {
    /// The configuration it runs with.
    public let configuration: ImageServerConfiguration
    /// The request handling.
    public let proxy: ImageProxy
    /// Where `/metrics` reads from: the server's and the library's metrics.
    public let registry: PrometheusCollectorRegistry
    /// `/playground` and `/status`.
    let pages: ServerPages
    /// The port once bound, and who waits for it until then.
    private let listening = BoundPort()
    /// The operations port's, when ``ImageServerConfiguration/operationsPort`` is set.
    private let operationsListening = BoundPort()
    private let draining = Locked(false)
    /// Who hears that the drain began (``runUntilSignalled(onDrain:)``).
    private let drainObservers = Locked<[@Sendable () -> Void]>([])
    private let logger: Logger
    /// `IMGPROXY_MAX_CLIENTS`' count of client connections; nil without a limit.
    let connectionLimiter: ConnectionLimiter?
    /// The same limit on the operations port, counted apart: idle or half-sent connections there
    /// can neither hold the public port's share nor grow without end.
    let operationsConnectionLimiter: ConnectionLimiter?

    /// A server; nothing listens until ``run()``.
    ///
    /// With a `tracer`, or the process-wide one once bootstrapped (`InstrumentationSystem`), each
    /// request is a server span continuing an incoming `traceparent`, with spans beneath it for
    /// the result cache, the source's fetch (and its download), the processing (its decode,
    /// transforms and encode) and the store; downloads send `traceparent` to the origin.
    /// - Throws: `WebImageError` when a cache directory cannot be opened, or
    ///   `WebImageError.Code.invalidArgument` when neither a key nor `allowsUnsigned` is given.
    public init(
        configuration: ImageServerConfiguration, logger: Logger = Logger(label: "webimage.server"), tracer: (any Tracer)? = nil
    ) throws(WebImageError) {
        self.configuration = configuration
        self.logger = logger
        connectionLimiter = configuration.maximumClients > 0 ? ConnectionLimiter(maximum: configuration.maximumClients) : nil
        operationsConnectionLimiter =
            configuration.maximumClients > 0 && configuration.operationsPort != nil
            ? ConnectionLimiter(maximum: configuration.maximumClients) : nil
        registry = PrometheusCollectorRegistry()
        let factory = PrometheusMetricsFactory(registry: registry)
        let telemetry = Telemetry(metricsFactory: factory, tracer: tracer)
        let metrics = ServerMetrics(factory: factory)
        let demos = configuration.playground ? try DemoSources() : nil
        proxy = try ImageProxy(configuration: configuration, telemetry: telemetry, metrics: metrics, localSources: demos)
        pages = try ServerPages(
            configuration: configuration, demos: demos, metrics: metrics, encodableFormats: proxy.parser.encodableFormats)
        if configuration.allowsUnsigned {
            logger.warning("unsigned URLs are allowed: anyone can make this server fetch and process any allowed source")
        }
    }

    /// The port the server listens on, once it does (for a configuration with port 0).
    public var port: Int {
        get async { await listening.value }
    }

    /// The port of the operational routes, once it listens; only with an
    /// ``ImageServerConfiguration/operationsPort`` (else it never returns).
    public var operationsPort: Int {
        get async { await operationsListening.value }
    }

    /// Listens until the service group is told to stop, then drains and closes the caches.
    public func run() async throws {
        let application = Application(
            router: makeRouter(),
            server: connections(limiter: connectionLimiter),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: "webimage"),
            onServerRunning: { [self] channel in
                connectionLimiter?.listening(on: channel)
                bound(channel.localAddress?.port ?? configuration.port)
            },
            logger: logger)
        // The operations port gets the public port's deadlines and client limit: it may be bound
        // beyond loopback (the Kubernetes base binds 0.0.0.0), and a connection held there idle
        // or half-sent costs a descriptor as one on the public port does.
        let operations = configuration.operationsPort.map { port in
            Application(
                router: makeOperationsRouter(),
                server: connections(limiter: operationsConnectionLimiter),
                configuration: ApplicationConfiguration(
                    address: .hostname(configuration.operationsHost, port: port), serverName: "webimage"),
                onServerRunning: { [self] channel in
                    // This listener may bind after the public one: it is freed on a crash too.
                    ListeningSockets.releaseOnCrash()
                    operationsConnectionLimiter?.listening(on: channel)
                    operationsListening.bound(channel.localAddress?.port ?? port)
                },
                logger: logger)
        }
        // The operations listener runs in a service group of its own, detached from this
        // service's graceful shutdown, so that while the public port drains it still answers:
        // /ready with 503 (the readiness flip an orchestrator watches), /metrics and /status with
        // the drain's figures. Its own graceful shutdown stops it once the drain is over (a
        // cancelled Hummingbird listener logs its CancellationError as an error); its task does
        // not outlive this function.
        let operationsGroup = operations.map { ServiceGroup(configuration: ServiceGroupConfiguration(services: [$0], logger: logger)) }
        let operationsTask = operationsGroup.map { group in Task.detached { try await group.run() } }
        defer { operationsTask?.cancel() }
        // The application is a Service too: run here, it hears this service's graceful shutdown,
        // stops accepting, and returns once the requests in flight are answered.
        try await withGracefulShutdownHandler {
            try await application.run()
        } onGracefulShutdown: { [self] in
            draining.withLock { $0 = true }
            onDrain()
        }
        await operationsGroup?.triggerGracefulShutdown()
        _ = await operationsTask?.result
        await proxy.shutdown()
    }

    /// Every listener's connections: HTTP/1 with the idle timeout and header limits, the read and
    /// write deadlines, HTTP/1.0's close, the drain, and `limiter`'s count.
    private func connections(limiter: ConnectionLimiter?) -> HTTPServerBuilder {
        let http = HTTP1Channel.Configuration(
            additionalChannelHandlers: [ClientGoneHandler()],
            idleTimeout: .seconds(Int64(configuration.idleTimeout)),
            httpDecoderConfiguration: .init(
                maxHeaderFieldSize: configuration.maximumRequestHeaderBytes, maxHeaderListSize: configuration.maximumRequestHeaderBytes))
        let timeouts = (read: TimeAmount(configuration.readRequestTimeout), write: TimeAmount(configuration.writeResponseTimeout))
        let drainGrace = TimeAmount(configuration.drainGrace)
        return HTTPServerBuilder { responder in
            ProxyHTTP1Channel(
                inner: HTTP1Channel(responder: responder, configuration: http), limiter: limiter, readTimeout: timeouts.read,
                writeTimeout: timeouts.write, drainGrace: drainGrace)
        }
    }

    /// Runs the server in its own service group that stops on SIGTERM or SIGINT; `onDrain` is
    /// called as the drain begins (the command prints `draining` for scripts and tests).
    /// `services`, such as a trace exporter, run beside it and stop after it, so that what the
    /// drained requests recorded is still sent.
    public func runUntilSignalled(alongside services: [any Service] = [], onDrain: @escaping @Sendable () -> Void = {}) async throws {
        drainObservers.withLock { $0.append(onDrain) }
        var groupConfiguration = ServiceGroupConfiguration(
            services: services + [self], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // imgproxy's graceful stop timeout: requests still running then are cancelled.
        groupConfiguration.maximumGracefulShutdownDuration = configuration.gracefulStopTimeout ?? configuration.requestTimeout + .seconds(5)
        let group = ServiceGroup(configuration: groupConfiguration)
        try await group.run()
    }

    private func onDrain() {
        for observer in drainObservers.withLock({ $0 }) { observer() }
    }

    /// Whether the server takes new work: false once shutdown has begun.
    var isReady: Bool { !draining.withLock { $0 } }

    private func bound(_ port: Int) {
        ListeningSockets.releaseOnCrash()
        pages.listening(on: port)
        listening.bound(port)
    }

    /// The routes, each under the configured prefix as imgproxy's router adds it: the operational
    /// routes and the pages that are on, with `HEAD` as their `GET` without a body; every other
    /// path is the proxy's, through the same ``ImageProxyMiddleware`` another application mounts.
    /// The proxy is a middleware rather than a `/**` route because a path no route takes costs the
    /// router one component to reject, where a recursive wildcard walks every component of a long
    /// imgproxy path (5% of a result-cache hit's CPU, measured with perf).
    package func makeRouter() -> Router<ServerRequestContext> {
        let router = Router(context: ServerRequestContext.self, options: .autoGenerateHeadEndpoints)
        if let tracer = proxy.tracer { router.add(middleware: RequestTracingMiddleware(tracer: tracer)) }
        router.add(middleware: ResponseStampMiddleware())
        router.add(middleware: MethodMiddleware(corsHeaders: proxy.corsHeaders))
        let prefix = configuration.pathPrefix
        let routes = router.group(RouterPath(prefix))
        addOperationalRoutes(to: routes, all: configuration.operationsPort == nil)
        if configuration.playground {
            for path in ["/playground", "/playground/sign", "/playground/demo/**"] {
                routes.get(RouterPath(path)) { [self] request, context in page(request, context: context) }
            }
        }
        // Added after the routes, so it applies only to the paths none of them takes.
        router.add(
            middleware: ImageProxyMiddleware(
                proxy: proxy, prefix: prefix, connectionClosed: { $0.channel.closeFuture },
                answered: { context, path, tier in context.access.record(proxyPath: path, prefix: prefix, tier: tier) }))
        router.add(middleware: UnroutedMiddleware(prefix: prefix))
        return router
    }

    /// The operations port's routes (`--ops-bind`): `/health`, `/ready`, `/metrics` and the status
    /// page, with no prefix and no proxy.
    func makeOperationsRouter() -> Router<ServerRequestContext> {
        let router = Router(context: ServerRequestContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: ResponseStampMiddleware())
        router.add(middleware: MethodMiddleware(corsHeaders: []))
        addOperationalRoutes(to: router, all: true)
        return router
    }

    /// `/health` (and the configured health path) always; with `all`, `/ready`, `/metrics` and the
    /// status page too, which `--ops-bind` moves to its own port.
    private func addOperationalRoutes(to routes: some RouterMethods<ServerRequestContext>, all: Bool) {
        for path in Set(["/health", configuration.healthCheckPath ?? "/health"]) {
            routes.get(RouterPath(path)) { _, _ in Self.health }
        }
        guard all else {
            for path in ["/ready", "/metrics", "/status", "/status/figures"] {
                routes.get(RouterPath(path)) { _, _ throws(ProxyError) -> Response in
                    throw .notFound("\(path) is served on the operations port")
                }
            }
            return
        }
        routes.get("/ready") { [self] _, _ in isReady ? Self.text(200, "ready") : Self.text(503, "shutting down") }
        routes.get("/metrics") { [self] _, _ in
            ProxyResponse(
                status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")], body: Data(metricsText().utf8)
            ).hummingbirdResponse
        }
        if configuration.statusPage {
            for path in ["/status", "/status/figures"] {
                routes.get(RouterPath(path)) { [self] request, context in page(request, context: context) }
            }
        }
    }

    /// imgproxy's health answer (`handlers/health/handler.go`): its words, plain text, not cached.
    private static var health: Response {
        ProxyResponse(
            status: 200, headers: [("Content-Type", "text/plain"), ("Cache-Control", "no-cache")], body: Data("imgproxy is running".utf8)
        ).hummingbirdResponse
    }

    private static func text(_ status: Int, _ line: String) -> Response {
        ProxyResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Data((line + "\n").utf8))
            .hummingbirdResponse
    }

    /// A page's answer, the access rules and tokens applied by the pages.
    private func page(_ request: Request, context: ServerRequestContext) -> Response {
        // Under the prefix on the public port; as it is on the operations port, which has none.
        let raw = Substring(request.uri.path)
        let path = Self.removingPrefix(configuration.pathPrefix, from: raw) ?? raw
        let forwarding = PageAccess.Forwarding(
            forwarded: request.headers[HeaderName.forwarded], forwardedFor: request.headers[HeaderName.forwardedFor],
            realIP: request.headers[HeaderName.realIP])
        let page = ServerPages.Request(
            path: path, query: request.uri.query, peerAddress: context.remoteAddress?.ipAddress, forwarding: forwarding,
            tokenHeader: request.headers[path.hasPrefix("/status") ? HeaderName.statusToken : HeaderName.playgroundToken])
        let answer =
            pages.respond(to: page, metrics: { MetricsReading(text: metricsText()) }) ?? proxy.errorResponse(.notFound("no such page"))
        return answer.hummingbirdResponse
    }

    /// `path` without `prefix`, which must be followed by `/` or nothing; nil when it is not there.
    package static func removingPrefix(_ prefix: String, from path: Substring) -> Substring? {
        guard !prefix.isEmpty else { return path }
        guard path.hasPrefix(prefix) else { return nil }
        let rest = path.dropFirst(prefix.count)
        if rest.isEmpty { return "/" }
        return rest.first == "/" ? rest : nil
    }

    /// Whether two strings are equal, in a time that depends on their lengths only: a secret
    /// compared byte by byte with an early exit tells an attacker how much of it was right.
    static func constantTimeEqual(_ given: String, _ expected: String) -> Bool {
        let (a, b) = (Array(given.utf8), Array(expected.utf8))
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0 && a.count == b.count
    }

    /// The registry's exposition, with the work gauges as of now.
    private func metricsText() -> String {
        proxy.metrics.running.record(proxy.gate.running)
        proxy.metrics.queued.record(proxy.gate.queued)
        return String(decoding: registry.emitToBuffer(), as: UTF8.self)
    }
}

/// Hummingbird's basic context plus the peer's address, which the playground's access rule
/// reads, and the connection, whose closing cancels the request's work.
package struct ServerRequestContext: RequestContext, RemoteAddressRequestContext {
    package var coreContext: CoreRequestContextStorage
    package let remoteAddress: SocketAddress?
    let channel: any Channel
    /// The proxy's facts about its answer, for the access line and the request's span.
    let access = AccessRecord()

    package init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        remoteAddress = source.channel.remoteAddress
        channel = source.channel
    }
}
