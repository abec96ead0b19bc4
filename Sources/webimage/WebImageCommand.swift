import ArgumentParser

/// The `webimage` command: image loading and caching from the shell.
@main
struct WebImageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webimage",
        abstract: "Load, cache and inspect web images on Linux.",
        subcommands: [DemoCommand.self]
    )
}
