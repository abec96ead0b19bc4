package import AsyncHTTPClient
package import Foundation
package import NIOCore
package import NIOHTTP1
package import Logging
package import ServiceLifecycle
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
    package let client: HTTPClient
    package let port: Int
    package let signer = URLSigner(keys: [exampleKey])
    package let cacheDirectory: URL

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
        let origin: OriginServer
        if let given { origin = given } else { origin = try await OriginServer.start() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("server-\(UUID().uuidString)")
        var configuration = configuration
        configuration.cacheDirectory = directory
        var logger = Logger(label: "webimage.server")
        logger.logLevel = .warning
        let server = try ImageServer(configuration: configuration, logger: logger, tracer: tracer)
        let group = ServiceGroup(services: [server], logger: logger)
        let running = Task { try await group.run() }
        let port = await server.port
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))
        let harness = ServerHarness(server: server, origin: origin, client: client, port: port, cacheDirectory: directory)
        var failure: (any Error)?
        do { try await body(harness) } catch { failure = error }
        // The client goes first: a connection it keeps alive would hold the drain for its grace.
        try? await client.shutdown()
        await group.triggerGracefulShutdown()
        _ = try? await running.value
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
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 64 * 1024 * 1024)
        return Answer(status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) }, body: Data(buffer: body))
    }
}
