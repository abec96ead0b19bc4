package import Foundation
import WebImageTesting

/// What a run of the built `webimage` command gave.
package struct CommandRun {
    package let status: Int32
    package let lines: [String]
    package let standardError: String

    package init(status: Int32, lines: [String], standardError: String) {
        (self.status, self.lines, self.standardError) = (status, lines, standardError)
    }

    package var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(lines.joined(separator: "\n").utf8))) as? [String: Any] ?? [:]
    }
    package func jsonLines() -> [[String: Any]] {
        lines.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }
}

/// A directory and a cache directory of its own, and a way to run the built `webimage` command
/// with them, as a user would.
package final class CommandWorkspace: Sendable {
    package let directory: URL
    package let cacheDirectory: URL

    package init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-cli-\(UUID().uuidString)")
        cacheDirectory = directory.appendingPathComponent("cache")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    package func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    package func run(_ arguments: [String], environment extra: [String: String] = [:]) async throws -> CommandRun {
        var environment = ProcessInfo.processInfo.environment
        environment["WEBIMAGE_CACHE_DIR"] = cacheDirectory.path
        for (name, value) in extra { environment[name] = value }
        let errors = directory.appendingPathComponent("stderr-\(UUID().uuidString).txt")
        let child = try ChildProcess(ChildProcess.builtProduct("webimage"), arguments, environment: environment, standardError: errors)
        let exit = try await child.waitForExit()
        let standardError = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        if exit.signaled { throw CommandKilled(arguments: arguments, standardError: standardError) }
        return CommandRun(status: exit.status, lines: child.lines, standardError: standardError)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }
}

/// The command was killed by a signal instead of exiting; the end of what it wrote to standard
/// error (a crash's message, then the crashed thread's backtrace) says why.
package struct CommandKilled: Error, CustomStringConvertible {
    package let arguments: [String]
    package let standardError: String
    package var description: String {
        "webimage \(arguments.joined(separator: " ")) was killed by a signal; its standard error begins:\n"
            + standardError.split(separator: "\n").prefix(40).joined(separator: "\n")
    }
}
