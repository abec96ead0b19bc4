import ArgumentParser
import Foundation
import WebImageCore
import WebImageDataset

/// The `webimage` command: image loading and caching from the shell.
///
/// Exit status: 0 success, 1 a failure of the work, 2 a usage error.
@main
struct WebImageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webimage",
        abstract: "Load, cache, convert and inspect web images on Linux.",
        discussion: """
            The cache lives in $WEBIMAGE_CACHE_DIR, else ~/.cache/webimage/default (XDG_CACHE_HOME is honoured). \
            Exit status: 0 success, 1 a failure of the work, 2 a usage error.
            """,
        // The one version: the Python package's `webimage.__version__` is read from it when the wheel is built.
        version: WebImageRelease.version,
        subcommands: [
            FetchCommand.self, PrefetchCommand.self, ConvertCommand.self, InfoCommand.self, CacheCommand.self, ServeCommand.self,
            DemoCommand.self, HealthCommand.self,
        ]
    )

    /// Parses and runs, mapping ArgumentParser's usage-error status (64) to 2.
    static func main() async {
        do {
            var arguments = Array(CommandLine.arguments.dropFirst())
            // `prefetch` takes img2dataset's command line as written too (--image_size=256 ...).
            if arguments.first == PrefetchCommand.configuration.commandName {
                let translated = Img2datasetArguments.translate(Array(arguments.dropFirst()))
                arguments = [arguments[0]] + translated.arguments
                for warning in translated.warnings { printError("webimage: \(warning)") }
            }
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                if !message.isEmpty { print(message) }
                Foundation.exit(0)
            }
            if !message.isEmpty { FileHandle.standardError.write(Data((message + "\n").utf8)) }
            Foundation.exit(code == .validationFailure ? 2 : code.rawValue)
        }
    }
}
