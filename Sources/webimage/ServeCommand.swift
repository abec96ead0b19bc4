import ArgumentParser
import Foundation
import Logging
import WebImage
import WebImageServer

/// `webimage serve`: the image proxy (imgproxy's URL format) on Hummingbird.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the image proxy: imgproxy-compatible signed URLs, resized and converted on the fly.",
        discussion: """
            Every setting can also be set by its environment variable, named in the list below \
            (--max-src-bytes: WEBIMAGE_MAX_SRC_BYTES); a flag given on the command line wins. \
            Repeatable settings (--key, --salt, --preset) take commas in the variable; booleans \
            take 1, true or yes, 0, false or no. imgproxy's IMGPROXY_* variables \
            are read too, with imgproxy's parsing, where a WEBIMAGE_ one is not set; those not \
            supported are named in a warning at start (docs/imgproxy-configuration.md). SIGTERM \
            and SIGINT stop the server gracefully: requests in flight finish, new ones are refused.

            Example:
              webimage serve --key 736563726574 --salt 68656C6C6F --auto-webp
              curl http://127.0.0.1:8080/oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png

            Settings:
            \(ServerSetting.helpText)
            """
    )

    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp("Settings as --NAME VALUE, --SWITCH or --no-SWITCH, each listed below.", valueName: "setting"))
    var settings: [String] = []

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let settings: ServeSettings
        do {
            settings = try ServeSettings(arguments: self.settings, environment: environment)
        } catch {
            throw ValidationError(error.message ?? error.description)
        }
        let traced = TracingRequest.isRequested(switch: settings.tracing, environment: environment)
        LogOutput(level: settings.logLevel, json: settings.logsJSON, traced: traced).bootstrap()
        let tracing = try TraceExport.bootstrap(switch: settings.tracing, environment: environment)
        HeapTuning.keepImageBuffers()
        let server: ImageServer
        do {
            server = try ImageServer(configuration: settings.configuration)
        } catch {
            throw CommandFailure("cannot start: \(error.message ?? error.description)")
        }
        let logger = Logger(label: "webimage.server")
        for warning in settings.warnings { logger.warning("\(warning)") }
        let announce = Announcements(json: settings.logsJSON, logger: logger)
        Task { announce.say("listening", address: "http://\(settings.configuration.host):\(await server.port)", line: "listening on") }
        if settings.configuration.operationsPort != nil {
            Task {
                let address = "http://\(settings.configuration.operationsHost):\(await server.operationsPort)"
                announce.say("operations listening", address: address, line: "operations on")
            }
        }
        try await server.runUntilSignalled(alongside: tracing.map { [$0] } ?? [], onDrain: { announce.say("draining", line: "draining") })
    }
}

/// The lines scripts read on standard output: where the server listens (the port of
/// `--bind HOST:0` is learnt here), where its operations port listens, and that it drains. As
/// text, a plain line (`listening on http://HOST:PORT`) beside the same notice in the log; with
/// `--log-format json`, one JSON object like the log's lines, whatever the log level, so that every
/// line the process prints parses (`{"msg":"listening","address":"http://HOST:PORT",...}`).
struct Announcements: Sendable {
    let json: Bool
    let logger: Logger

    func say(_ message: String, address: String? = nil, line: String) {
        let metadata: Logger.Metadata = address.map { ["address": "\($0)"] } ?? [:]
        guard json else {
            logger.notice("\(message)", metadata: metadata)
            let text = ([line] + (address.map { [$0] } ?? [])).joined(separator: " ")
            FileHandle.standardOutput.write(Data((text + "\n").utf8))
            return
        }
        var output = Logger(label: logger.label) { label in
            JSONLogHandler(label: label) { FileHandle.standardOutput.write(Data($0.utf8)) }
        }
        output.logLevel = .notice
        output.notice("\(message)", metadata: metadata)
    }
}
