import AsyncHTTPClient
import Foundation
import Testing
import WebImageTesting
import WebImageTestSupport

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

    @Test("on SIGTERM the operations port answers /ready 503 and /metrics while the public port drains, then the process exits 0")
    func readinessFlip() async throws {
        let origin = try await OriginServer.start()
        origin.route("/stall.jpg", OriginResponse(delivery: .neverRespond))
        let directory = try TemporaryDirectory("serve-flip")
        // The request in flight holds the drain open until the graceful stop cuts it, 5 s on.
        let arguments = [
            "serve", "--bind", "127.0.0.1:0", "--ops-bind", "127.0.0.1:0", "--allow-unsigned", "--allow-loopback-sources",
            "--result-cache-dir", directory.path, "--download-timeout", "60", "--request-timeout", "60", "--graceful-stop-timeout", "5",
            "--log-level", "error",
        ]
        let server = try ChildProcess(ChildProcess.builtProduct("webimage"), arguments)
        let publicAddress = String(try await server.waitForLine { $0.hasPrefix("listening on ") }.dropFirst("listening on ".count))
        let operations = String(try await server.waitForLine { $0.hasPrefix("operations on ") }.dropFirst("operations on ".count))
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        func answer(_ url: String) async throws -> (status: UInt, text: String) {
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
            return (response.status.code, String(buffer: try await response.body.collect(upTo: 1 << 20)))
        }
        #expect(try await answer(operations + "/ready") == (200, "ready\n"))
        let request = HTTPClientRequest(url: "\(publicAddress)/unsafe/w:10/plain/\(origin.url("/stall.jpg"))")
        let pending = Task { try? await client.execute(request, timeout: .seconds(90)) }
        try await origin.waitForRequests(1, to: "/stall.jpg")
        server.terminate()
        try await server.waitForLine { $0 == "draining" }
        #expect(try await answer(operations + "/ready") == (503, "shutting down\n"), "the flip, while the drain holds the process")
        let metrics = try await answer(operations + "/metrics")
        #expect(metrics.status == 200 && metrics.text.contains("webimage_server_"), "the figures stay readable during the drain")
        #expect(try await server.waitForExit(timeout: .seconds(30)).status == 0)
        _ = await pending.value
        try await client.shutdown()
        try await origin.shutdown()
    }

    @Test(
        "--log-format json: every line printed is one JSON object (time, level, message, fields, the request id among them), the listening addresses too; a graceful stop logs no error"
    )
    func jsonLogs() async throws {
        let directory = try TemporaryDirectory("serve-json-logs")
        let errors = directory.url.appendingPathComponent("stderr.log")
        let server = try ChildProcess(
            ChildProcess.builtProduct("webimage"),
            [
                "serve", "--bind", "127.0.0.1:0", "--ops-bind", "127.0.0.1:0", "--allow-unsigned", "--result-cache-dir", directory.path,
                "--log-format", "json", "--log-level", "error",
            ],
            standardError: errors)
        @Sendable func object(_ line: String) -> [String: Any]? {
            try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        }
        // The machine-readable lines stay on standard output whatever the log level, now as JSON.
        func address(_ message: String) async throws -> String {
            let line = try await server.waitForLine { object($0)?["msg"] as? String == message }
            return try #require(object(line)?["address"] as? String)
        }
        let publicAddress = try await address("listening")
        let operations = try await address("operations listening")
        #expect(publicAddress.hasPrefix("http://127.0.0.1:") && operations.hasPrefix("http://127.0.0.1:") && publicAddress != operations)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let response = try await client.execute(HTTPClientRequest(url: publicAddress + "/health"), timeout: .seconds(10))
        #expect(response.status == .ok)
        let refused = try await client.execute(
            HTTPClientRequest(url: publicAddress + "/unsafe/w:10/plain/ftp://x/y.jpg"), timeout: .seconds(10))
        #expect((400..<500).contains(refused.status.code), "a refusal is the client's error, not the server's")
        _ = try await client.execute(HTTPClientRequest(url: operations + "/ready"), timeout: .seconds(10))
        try await client.shutdown()
        server.terminate()
        #expect(try await server.waitForExit().status == 0)
        let printed = server.lines
        #expect(printed.allSatisfy { object($0) != nil }, "standard output: \(printed)")
        // The two listeners announce themselves from tasks of their own, in either order.
        let messages = printed.compactMap { object($0)?["msg"] as? String }
        #expect(Set(messages.prefix(2)) == ["listening", "operations listening"] && messages.dropFirst(2) == ["draining"], "\(messages)")
        let lines = try String(contentsOf: errors, encoding: .utf8).split(separator: "\n").map(String.init)
        let logged = try lines.map { try #require(object($0), "\($0)") }
        #expect(logged.allSatisfy { $0["time"] is String && $0["level"] is String && $0["msg"] is String })
        #expect(
            !logged.contains { $0["level"] as? String == "error" || $0["level"] as? String == "critical" },
            "a normal stop logs no error: \(lines)")

        // At the info level, the access line names the request its answer names.
        let verbose = try ChildProcess(
            ChildProcess.builtProduct("webimage"),
            ["serve", "--bind", "127.0.0.1:0", "--allow-unsigned", "--result-cache-dir", directory.path, "--log-format", "json"],
            standardError: errors)
        let line = try await verbose.waitForLine { object($0)?["msg"] as? String == "listening" }
        let address = try #require(object(line)?["address"] as? String)
        let infoClient = HTTPClient(eventLoopGroupProvider: .singleton)
        let answer = try await infoClient.execute(HTTPClientRequest(url: address + "/health"), timeout: .seconds(10))
        let requestID = try #require(answer.headers.first(name: "X-Request-Id"))
        try await infoClient.shutdown()
        verbose.terminate()
        #expect(try await verbose.waitForExit().status == 0)
        let infoLines = try String(contentsOf: errors, encoding: .utf8).split(separator: "\n")
        let objects = try infoLines.map { try #require(object(String($0)), "\($0)") }
        let access = try #require(objects.first { $0["msg"] as? String == "request" && $0["path"] as? String == "/health" })
        #expect(access["status"] as? String == "200" && access["level"] as? String == "info")
        #expect(access["hb.request.id"] as? String == requestID, "the line names the request its answer names")
        #expect(access["logger"] as? String == "webimage.server")
        #expect(!objects.contains { $0["level"] as? String == "error" }, "a normal stop logs no error")
    }
}
