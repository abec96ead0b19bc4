import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import WebImageServer

/// `webimage health`: asks a running server's `/health` and exits 0 when it answers 200, 1
/// otherwise, for a container's `HEALTHCHECK` (imgproxy's `imgproxy health`). Without `--url` it
/// asks the address `serve` would listen on, from the same variables.
struct HealthCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Exit 0 when a running server's /health answers 200, else 1.",
        discussion: """
            Without --url: http://ADDRESS/health for the address serve reads from WEBIMAGE_BIND, \
            IMGPROXY_BIND or PORT (default 127.0.0.1:8080; a server on every interface is asked on loopback).
            """)

    @Option(help: ArgumentHelp("The URL to ask.", valueName: "URL"))
    var url: String?

    @Option(help: ArgumentHelp("Seconds to wait for the answer (default 5).", valueName: "SECONDS"))
    var timeout: Double = 5

    func run() async throws {
        let limit = try flagDuration(timeout, "--timeout")
        let target = try url ?? Self.defaultURL(ProcessInfo.processInfo.environment)
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))
        let status: UInt
        do {
            status = try await client.execute(HTTPClientRequest(url: target), timeout: TimeAmount(limit)).status.code
        } catch {
            try? await client.shutdown()
            throw CommandFailure("\(target): no answer (\(error))")
        }
        try? await client.shutdown()
        guard status == 200 else { throw CommandFailure("\(target) answered \(status)") }
        print("ok")
    }

    /// The address `serve` listens on, as `serve` reads it, with an any-interface host asked on loopback.
    static func defaultURL(_ environment: [String: String]) throws -> String {
        var (host, port): (String, Int)
        do {
            (host, port) = try ServeSettings.listeningAddress(environment: environment)
        } catch {
            throw ValidationError("the bind address: \(error.message ?? error.description)")
        }
        switch host {
        case "0.0.0.0", "": host = "127.0.0.1"
        case "::": host = "::1"
        default: break
        }
        return "http://\(host.contains(":") ? "[\(host)]" : host):\(port)/health"
    }
}
