import AsyncHTTPClient
import Foundation
import Testing
import WebImageTesting

/// The operating surface of `webimage serve` and `webimage health`, over real connections to a
/// child process on 127.0.0.1: `--ops-bind` (imgproxy's `IMGPROXY_PROMETHEUS_BIND` names the same
/// address) moves `/ready`, `/metrics` and `/status` to a port of their own, and `webimage health`
/// is a container's health check, exiting by what `/health` answers (imgproxy's `imgproxy health`).
@Suite("Operations port and health command")
struct OperationsPortTests {
    @Test("--ops-bind serves /ready, /metrics and /status on their own port; /health answers on both; health exits by it")
    func operationsPort() async throws {
        let directory = try TemporaryDirectory("serve-ops")
        let arguments = [
            "serve", "--bind", "127.0.0.1:0", "--ops-bind", "127.0.0.1:0", "--allow-unsigned", "--result-cache-dir", directory.path,
            "--log-level", "error",
        ]
        let server = try ChildProcess(ChildProcess.builtProduct("webimage"), arguments)
        let prefix = (public: "listening on ", operations: "operations on ")
        let publicAddress = String(try await server.waitForLine { $0.hasPrefix(prefix.public) }.dropFirst(prefix.public.count))
        let operations = String(try await server.waitForLine { $0.hasPrefix(prefix.operations) }.dropFirst(prefix.operations.count))
        #expect(publicAddress != operations)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        func status(_ url: String) async throws -> UInt {
            try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(10)).status.code
        }
        for path in ["/ready", "/metrics", "/status"] {
            #expect(try await status(operations + path) == 200, "\(path) on the operations port")
            #expect(try await status(publicAddress + path) == 404, "\(path) not on the public port")
        }
        #expect(try await status(operations + "/health") == 200)
        #expect(try await status(publicAddress + "/health") == 200)
        let metrics = try await client.execute(HTTPClientRequest(url: operations + "/metrics"), timeout: .seconds(10))
        let text = String(buffer: try await metrics.body.collect(upTo: 1 << 20))
        #expect(text.contains("webimage_server_"), "the server's own series")

        for url in [publicAddress + "/health", operations + "/health"] {
            let health = try ChildProcess(ChildProcess.builtProduct("webimage"), ["health", "--url", url])
            #expect(try await health.waitForLine { _ in true } == "ok")
            #expect(try await health.waitForExit().status == 0, "\(url)")
        }
        let refusing = try RefusingPort()
        let down = try ChildProcess(
            ChildProcess.builtProduct("webimage"), ["health", "--url", "http://127.0.0.1:\(refusing.port)/health", "--timeout", "5"])
        #expect(try await down.waitForExit().status == 1, "nothing listens: unhealthy")
        let notFound = try ChildProcess(ChildProcess.builtProduct("webimage"), ["health", "--url", publicAddress + "/ready"])
        #expect(try await notFound.waitForExit().status == 1, "an answer other than 200: unhealthy")
        // Without --url: the address serve would read from the same variables.
        let port = try #require(URLComponents(string: publicAddress)?.port)
        let fromEnvironment = try ChildProcess(
            ChildProcess.builtProduct("webimage"), ["health"], environment: ["IMGPROXY_BIND": ":\(port)", "PATH": "/usr/bin:/bin"])
        #expect(try await fromEnvironment.waitForExit().status == 0, "IMGPROXY_BIND=:\(port), asked on loopback")
        try await client.shutdown()
        server.terminate()
        #expect(try await server.waitForExit().status == 0)
    }
}
