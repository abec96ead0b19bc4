import AsyncHTTPClient
import Hummingbird
import HummingbirdTesting
import HTTPTypes
package import Foundation
import NIOCore
package import NIOHTTP1
import Logging
import ServiceLifecycle
package import Tracing
package import WebImageServer
package import WebImageTesting

/// A proxy server on 127.0.0.1 (port 0) in front of an ``OriginServer``, with a fresh cache
/// directory and imgproxy's published example key and salt (`secret`, `hello`); requests go over
/// real HTTP through AsyncHTTPClient.
package struct ServerHarness {
    /// imgproxy's documented example pair.
    package static let exampleKey = SigningKey(hexKey: "736563726574", hexSalt: "68656C6C6F")!

    package let server: ImageServer
    package let origin: OriginServer
    /// The proxy's port; 0 in process.
    package let port: Int
    /// How requests reach the server.
    private let transport: Transport
    package let signer = URLSigner(keys: [exampleKey])
    package let cacheDirectory: URL

    private enum Transport {
        /// Real HTTP to the port, through AsyncHTTPClient.
        case socket(HTTPClient)
        /// The server's router, called in this process through HummingbirdTesting.
        case router(any TestClientProtocol)
    }

    /// A response as the client saw it.
    package struct Answer {
        package var status: Int
        package var headers: [(String, String)]
        package var body: Data

        package func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }

        package var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// The harness's defaults: port 0, loopback sources allowed, the example key, short timeouts.
    package static func configuration() -> ImageServerConfiguration {
        var configuration = ImageServerConfiguration()
        configuration.port = 0
        configuration.signingKeys = [exampleKey]
        configuration.allowsLoopbackSources = true
        configuration.downloadTimeout = .seconds(5)
        return configuration
    }

    /// Runs `body` against a server with `configuration` (and a fresh cache directory) in front
    /// of `origin`, or of a new origin.
    package static func with(
        _ configuration: ImageServerConfiguration = configuration(), origin given: OriginServer? = nil, tracer: (any Tracer)? = nil,
        _ body: (ServerHarness) async throws -> Void
    ) async throws {
        let (server, origin, directory, logger) = try await makeServer(configuration, origin: given, tracer: tracer)
        let group = ServiceGroup(services: [server], logger: logger)
        let running = Task { try await group.run() }
        let port = await server.port
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))
        let harness = ServerHarness(server: server, origin: origin, port: port, transport: .socket(client), cacheDirectory: directory)
        var failure: (any Error)?
        do { try await body(harness) } catch { failure = error }
        // The client goes first: a connection it keeps alive would hold the drain for its grace.
        try? await client.shutdown()
        await group.triggerGracefulShutdown()
        _ = try? await running.value
        try await cleanUp(origin: origin, directory: directory, failure: failure)
    }

    /// The server, its origin (the given one or a new one), a fresh cache directory for it, and
    /// its logger: what both ways of running it start from.
    private static func makeServer(_ configuration: ImageServerConfiguration, origin given: OriginServer?, tracer: (any Tracer)?)
        async throws -> (ImageServer, OriginServer, URL, Logger)
    {
        let origin: OriginServer
        if let given { origin = given } else { origin = try await OriginServer.start() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("server-\(UUID().uuidString)")
        var configuration = configuration
        configuration.cacheDirectory = directory
        var logger = Logger(label: "webimage.server")
        logger.logLevel = .warning
        return (try ImageServer(configuration: configuration, logger: logger, tracer: tracer), origin, directory, logger)
    }

    /// Stops the origin, removes the cache directory, and rethrows what the test threw.
    private static func cleanUp(origin: OriginServer, directory: URL, failure: (any Error)?) async throws {
        try? await origin.shutdown()
        try? FileManager.default.removeItem(at: directory)
        if let failure { throw failure }
    }

    /// The signed path of `options` over a plain source on the origin.
    package func signedPlain(_ options: String, _ originPath: String, extension: String? = nil) -> String {
        signer.sign("/\(options)/plain/\(origin.url(originPath).absoluteString)" + (`extension`.map { "@" + $0 } ?? ""))
    }

    /// A request to the proxy.
    package func get(_ path: String, method: HTTPMethod = .GET, headers: [(String, String)] = []) async throws -> Answer {
        let client: HTTPClient
        switch transport {
        case .router(let router): return try await Self.inProcess(router, path, method: method, headers: headers)
        case .socket(let socketClient): client = socketClient
        }
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 64 * 1024 * 1024)
        return Answer(status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) }, body: Data(buffer: body))
    }

    /// Runs `body` against the server's router in this process, through HummingbirdTesting's
    /// router client: no listener, no socket, no client pool. For the tests of what the proxy
    /// answers (imgproxy's options, signatures, headers), where nothing about connections is under
    /// test; the origin is still a real server on 127.0.0.1.
    package static func inProcess(
        _ configuration: ImageServerConfiguration = configuration(), origin given: OriginServer? = nil,
        _ body: (ServerHarness) async throws -> Void
    ) async throws {
        let (server, origin, directory, logger) = try await makeServer(configuration, origin: given, tracer: nil)
        // The router client lives as long as HummingbirdTesting's closure, which must be
        // @Sendable; `body` runs here instead, on this task, with the client handed out and the
        // closure held open until it is done.
        let (clients, handOut) = AsyncStream<any TestClientProtocol>.makeStream()
        let (finished, finish) = AsyncStream<Never>.makeStream()
        let application = Application(router: server.makeRouter(), logger: logger)
        let testing = Task {
            // A test framework that fails before it hands out a client ends the wait for one.
            defer { handOut.finish() }
            try await application.test(.router) { router in
                handOut.yield(router)
                for await _ in finished {}
            }
        }
        var failure: (any Error)?
        var handedOut = clients.makeAsyncIterator()
        if let router = await handedOut.next() {
            let harness = ServerHarness(server: server, origin: origin, port: 0, transport: .router(router), cacheDirectory: directory)
            do { try await body(harness) } catch { failure = error }
        }
        finish.finish()
        do { try await testing.value } catch { failure = failure ?? error }
        await server.proxy.shutdown()
        try await cleanUp(origin: origin, directory: directory, failure: failure)
    }

    private static func inProcess(_ router: any TestClientProtocol, _ path: String, method: HTTPMethod, headers: [(String, String)])
        async throws -> Answer
    {
        var fields = HTTPFields()
        for (name, value) in headers {
            guard let field = HTTPField.Name(name) else { continue }
            fields.append(HTTPField(name: field, value: value))
        }
        let response = try await router.executeRequest(
            uri: path, method: HTTPRequest.Method(rawValue: method.rawValue)!, headers: fields, body: nil)
        return Answer(
            status: response.status.code, headers: response.headers.map { ($0.name.rawName, $0.value) }, body: Data(buffer: response.body))
    }
}
