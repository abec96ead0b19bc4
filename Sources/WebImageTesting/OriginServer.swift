public import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// A real HTTP/1.1 server on 127.0.0.1 with an ephemeral port, scripted per path by tests.
///
/// Each path answers with an ``OriginResponse``: a status, headers and body, delivered whole, in
/// slow drips, cut short, reset, stalled, or never. The server answers conditional requests
/// (ETag, Last-Modified → 304), ranges (206, If-Range), and compresses with gzip when scripted.
/// Every request and connection event is logged; ``waitFor(timeout:_:where:)`` waits for one
/// without sleeping. Unscripted paths get 404.
///
/// ```swift
/// let origin = try await OriginServer.start()
/// origin.route("/cat.png", .ok(pngBytes, contentType: "image/png"))
/// // ... load origin.url("/cat.png") ...
/// #expect(origin.requestCount("/cat.png") == 1)
/// try await origin.shutdown()
/// ```
public final class OriginServer: Sendable {
    /// A request handler: given the request, the response to send.
    public typealias Responder = @Sendable (OriginRequest) -> OriginResponse

    struct State {
        var routes: [String: Responder] = [:]
        var requests: [OriginRequest] = []
        var requestsPerPath: [String: Int] = [:]
        var requestCount = 0
        var nextConnectionID = 0
        var connections: [Int: any Channel] = [:]
    }

    /// The port the server listens on.
    public let port: Int
    /// Whether the server speaks HTTPS (with ``TestCertificate``, self-signed, made at run time).
    public let usesTLS: Bool
    /// Whether requests and connection events are kept (see `start(tls:http2:keepsLog:)`).
    public let keepsLog: Bool
    private let listener: any Channel
    let state: NIOLockedValueBox<State>
    private let log = EventLog<OriginEvent>()

    private init(listener: any Channel, usesTLS: Bool, keepsLog: Bool) {
        self.listener = listener
        self.usesTLS = usesTLS
        self.keepsLog = keepsLog
        self.port = listener.localAddress?.port ?? 0
        self.state = NIOLockedValueBox(State())
    }

    /// Starts a server on 127.0.0.1 with a port the system picks; with `tls`, an HTTPS server
    /// whose certificate is self-signed (a verifying client refuses it); with `http2` as well, it
    /// offers HTTP/2 through ALPN (and HTTP/1.1 to clients that do not ask for it). On HTTP/2 each
    /// stream is served like an HTTP/1.1 request, so every scripted response works on both.
    /// Without `keepsLog` the server keeps only per-path request counts, not the requests and
    /// events themselves, so that a long run (`scripts/soak.sh`) does not grow with them; then
    /// ``requests`` is empty and ``waitFor(timeout:_:where:)`` sees nothing.
    ///
    /// A TLS server presents `certificate` (``TestCertificate/Kind/expiredServer`` to test an
    /// expired one); with `requiresClientCertificate` it refuses clients that do not present
    /// ``TestCertificate/Kind/client`` (mutual TLS).
    public static func start(
        tls: Bool = false, http2: Bool = false, keepsLog: Bool = true, certificate: TestCertificate.Kind = .server,
        requiresClientCertificate: Bool = false
    ) async throws -> OriginServer {
        precondition(!http2 || tls, "HTTP/2 is negotiated through TLS (ALPN)")
        let box = ServerBox()
        let identity = try TestCertificate.serverIdentity(certificate)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(identity.certificate)], privateKey: .privateKey(identity.privateKey)
        )
        if requiresClientCertificate {
            configuration.certificateVerification = .noHostnameVerification
            configuration.trustRoots = .certificates([try TestCertificate.certificate(.client)])
        }
        if http2 { configuration.applicationProtocols = ["h2", "http/1.1"] }
        let sslContext = tls ? try NIOSSLContext(configuration: configuration) : nil
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                guard let server = box.server else { return channel.close() }
                let connectionID = server.register(channel)
                let secured = channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                    }
                }
                guard http2 else {
                    return secured.flatMapThrowing { try Self.configureHTTP1(channel, server: server, connectionID: connectionID) }
                }
                return secured.flatMap {
                    channel.configureHTTP2SecureUpgrade(
                        h2ChannelConfigurator: { channel in Self.configureHTTP2(channel, server: server, connectionID: connectionID) },
                        http1ChannelConfigurator: { channel in
                            channel.eventLoop.makeCompletedFuture {
                                try Self.configureHTTP1(channel, server: server, connectionID: connectionID)
                            }
                        }
                    )
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let server = OriginServer(listener: listener, usesTLS: tls, keepsLog: keepsLog)
        box.server = server
        return server
    }

    private static func configureHTTP1(_ channel: any Channel, server: OriginServer, connectionID: Int) throws {
        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
        try channel.pipeline.syncOperations.addHandler(OriginHandler(server: server, connectionID: connectionID))
    }

    /// One connection, many streams: the connection's events are recorded here, each stream's
    /// request by its own handler behind an HTTP/2-to-HTTP/1 codec.
    private static func configureHTTP2(_ channel: any Channel, server: OriginServer, connectionID: Int) -> EventLoopFuture<Void> {
        server.record(.connectionOpened(connectionID: connectionID))
        channel.closeFuture.whenComplete { _ in server.connectionClosed(connectionID, pendingRequest: nil) }
        return channel.configureHTTP2Pipeline(mode: .server, connectionConfiguration: .init(), streamConfiguration: .init()) { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                try stream.pipeline.syncOperations.addHandler(OriginHandler(server: server, connectionID: connectionID, isStream: true))
            }
        }.map { _ in }
    }

    /// `http://127.0.0.1:PORT`, or `https://` for a TLS server.
    public var baseURL: String { "\(usesTLS ? "https" : "http")://127.0.0.1:\(port)" }

    /// The absolute URL of a path on this server (`path` starts with `/`).
    public func url(_ path: String) -> URL {
        URL(string: baseURL + path)!
    }

    /// Scripts `path` (without its query) to answer every request with `response`.
    public func route(_ path: String, _ response: OriginResponse) {
        route(path) { _ in response }
    }

    /// Scripts `path` to answer its first request with `responses[0]`, the second with
    /// `responses[1]`, and every later one with the last: a 503 then a 200, for example.
    public func route(_ path: String, sequence responses: [OriginResponse]) {
        precondition(!responses.isEmpty, "a sequence needs at least one response")
        route(path) { request in responses[min(request.indexOnPath, responses.count - 1)] }
    }

    /// Scripts `path` with a function of the request.
    public func route(_ path: String, responder: @escaping Responder) {
        state.withLockedValue { $0.routes[path] = responder }
    }

    /// Every request received so far, in order.
    public var requests: [OriginRequest] {
        state.withLockedValue { $0.requests }
    }

    /// The requests received for `path` (query ignored), in order.
    public func requests(to path: String) -> [OriginRequest] {
        requests.filter { $0.path == path }
    }

    /// How many requests arrived for `path` (query ignored).
    public func requestCount(_ path: String) -> Int {
        requests(to: path).count
    }

    /// Every event so far, in order.
    public var events: [OriginEvent] {
        log.events
    }

    /// Waits for the first event, past or future, that satisfies `predicate` (which must look
    /// only at the event).
    ///
    /// - Throws: ``EventLogTimeout`` when none comes within `timeout`, and
    ///   ``OriginServerError/shutDown`` when the server stops first.
    @discardableResult
    public func waitFor(
        timeout: Duration = .seconds(10),
        _ description: String = "an event",
        where predicate: @escaping @Sendable (OriginEvent) -> Bool
    ) async throws -> OriginEvent {
        try await log.waitFor(timeout: timeout, description, where: predicate)
    }

    /// Waits until `count` requests for `path` have arrived, and returns them.
    @discardableResult
    public func waitForRequests(_ count: Int, to path: String, timeout: Duration = .seconds(10)) async throws -> [OriginRequest] {
        try await waitFor(timeout: timeout, "\(count) requests to \(path)") { event in
            guard case .requestReceived(let request) = event else { return false }
            return request.path == path && request.indexOnPath == count - 1
        }
        return Array(requests(to: path).prefix(count))
    }

    /// Waits until a connection closes while a response for `path` was still being sent.
    public func waitForAbandonedResponse(to path: String, timeout: Duration = .seconds(10)) async throws {
        try await waitFor(timeout: timeout, "a connection closed during \(path)") { event in
            guard case .connectionClosed(_, let pending?) = event else { return false }
            return pending.path == path
        }
    }

    /// Stops listening, closes every open connection, and fails every pending wait.
    public func shutdown() async throws {
        let connections = state.withLockedValue { Array($0.connections.values) }
        log.close(with: OriginServerError.shutDown)
        try? await listener.close()
        for connection in connections { try? await connection.close() }
    }

    // MARK: - Called by the connection handlers

    func register(_ channel: any Channel) -> Int {
        state.withLockedValue { state in
            state.nextConnectionID += 1
            state.connections[state.nextConnectionID] = channel
            return state.nextConnectionID
        }
    }

    func recordRequest(_ head: HTTPRequestHead, body: [UInt8], connectionID: Int) -> OriginRequest {
        let request = state.withLockedValue { state in
            let path = OriginRequest.path(of: head.uri)
            let request = OriginRequest(
                method: head.method.rawValue,
                uri: head.uri,
                headers: head.headers.map { ($0.name, $0.value) },
                body: body,
                connectionID: connectionID,
                sequence: state.requestCount,
                indexOnPath: state.requestsPerPath[path, default: 0]
            )
            state.requestsPerPath[path, default: 0] += 1
            state.requestCount += 1
            if keepsLog { state.requests.append(request) }
            return request
        }
        record(.requestReceived(request))
        return request
    }

    func response(for request: OriginRequest) -> OriginResponse {
        let responder = state.withLockedValue { $0.routes[request.path] ?? $0.routes[request.uri] }
        return responder?(request) ?? .status(404)
    }

    func connectionClosed(_ connectionID: Int, pendingRequest: OriginRequest?) {
        state.withLockedValue { _ = $0.connections.removeValue(forKey: connectionID) }
        record(.connectionClosed(connectionID: connectionID, pendingRequest: pendingRequest))
    }

    func record(_ event: OriginEvent) {
        if keepsLog { log.record(event) }
    }
}

/// Why a wait on the ``OriginServer`` ended without its event, besides a timeout.
public enum OriginServerError: Error, Sendable, Equatable {
    /// The server shut down first.
    case shutDown
}

/// Hands the server to the child channel initializer, which must exist before the server does.
private final class ServerBox: Sendable {
    private let lock = NIOLockedValueBox<OriginServer?>(nil)
    var server: OriginServer? {
        get { lock.withLockedValue { $0 } }
        set { lock.withLockedValue { $0 = newValue } }
    }
}
