import Foundation
import NIOPosix
import WebImageTesting
import WebImageTestSupport

/// Debian's squid, run by a test on a loopback port with the access rules of the machine's own
/// `/etc/squid/squid.conf` (every `acl` and `http_access` line, as the package ships them), and
/// only what a test needs changed: the port, where it writes its logs and pid, no disk cache,
/// its own name, no grace period on shutdown. The stock rules are the point: they refuse `CONNECT` to any port
/// but 443 and allow requests from localhost.
final class Squid {
    let port: Int
    private let process: ChildProcess
    private let directory: TemporaryDirectory

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    private init(port: Int, process: ChildProcess, directory: TemporaryDirectory) {
        self.port = port
        self.process = process
        self.directory = directory
    }

    /// The stock configuration's access rules.
    static func stockRules(_ path: String = "/etc/squid/squid.conf") throws -> [String] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let rules = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.hasPrefix("acl ") || $0.hasPrefix("http_access ") }
        guard rules.contains(where: { $0.hasPrefix("http_access deny CONNECT") }) else {
            throw SquidError("\(path) has no CONNECT rule: not Debian's stock configuration")
        }
        return rules
    }

    /// Starts squid (installed by scripts/install-deps.sh) and waits until it accepts
    /// connections. Squid cannot be given port 0, so a port the system just handed out is passed
    /// on; if another process took it meanwhile, the next one is tried.
    static func start() async throws -> Squid {
        let rules = try stockRules()
        var failure = ""
        for _ in 0..<3 {
            let directory = try TemporaryDirectory("squid")
            // Squid started as root runs as the `proxy` user, which must write its logs here.
            try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
            let port = try freePort()
            let configuration =
                rules + [
                    "http_port 127.0.0.1:\(port)",
                    "pid_filename \(directory.path)/squid.pid",
                    "access_log stdio:\(directory.path)/access.log",
                    "cache_log \(directory.path)/cache.log",
                    "coredump_dir \(directory.path)",
                    "cache deny all",
                    // A container may have no name squid can find for itself, which it refuses to start without.
                    "visible_hostname localhost",
                    "shutdown_lifetime 0 seconds",
                ]
            let file = directory.url.appendingPathComponent("squid.conf")
            try configuration.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
            let process = try ChildProcess(
                URL(fileURLWithPath: "/bin/sh"), ["-c", "exec /usr/sbin/squid -N -d1 -f '\(file.path)' 2>&1"])
            let line = try await process.waitForLine { $0.contains("Accepting HTTP Socket connections") || $0.contains("FATAL") }
            if line.contains("Accepting") { return Squid(port: port, process: process, directory: directory) }
            failure = line
            process.kill()
            _ = try? await process.waitForExit()
        }
        throw SquidError("squid did not start: \(failure)")
    }

    /// A port nothing listens on right now.
    private static func freePort() throws -> Int {
        let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).wait()
        defer { try? channel.close().wait() }
        return channel.localAddress?.port ?? 0
    }

    /// Stops squid at once.
    func stop() async throws {
        process.kill()
        _ = try await process.waitForExit()
    }
}

struct SquidError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
