import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Vapor
import WebImageServer
import WebImageVapor

/// The image proxy embedded in an application, for scripts/compare/serve.py's `embedding` part:
/// the same configuration as its `webimage serve` row (unsigned URLs, loopback sources, a result
/// cache in DIRECTORY, warnings only), mounted at the root of a Hummingbird application with
/// `ImageProxyMiddleware` or of a Vapor one with `ImageProxyVaporMiddleware`, each on its own
/// HTTP server with its defaults.
///
/// Usage: EmbeddedProxy hummingbird|vapor PORT DIRECTORY
@main
struct EmbeddedProxy {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 4, let port = Int(arguments[2]) else {
            FileHandle.standardError.write(Data("usage: EmbeddedProxy hummingbird|vapor PORT DIRECTORY\n".utf8))
            exit(2)
        }
        var configuration = ImageServerConfiguration()
        configuration.allowsUnsigned = true
        configuration.allowsLoopbackSources = true
        configuration.cacheDirectory = URL(fileURLWithPath: arguments[3], isDirectory: true)
        switch arguments[1] {
        case "hummingbird": try await hummingbird(configuration, port: port)
        case "vapor": try await vapor(configuration, port: port)
        default:
            FileHandle.standardError.write(Data("EmbeddedProxy: hummingbird or vapor, not \(arguments[1])\n".utf8))
            exit(2)
        }
    }

    static func hummingbird(_ configuration: ImageServerConfiguration, port: Int) async throws {
        let proxy = try ImageProxy(configuration: configuration)
        let router = Router()
        router.add(middleware: ImageProxyMiddleware(proxy: proxy))
        let application = Hummingbird.Application(
            router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port)))
        var logger = Logging.Logger(label: "embedded")
        logger.logLevel = .warning
        try await ServiceGroup(services: [proxy, application], gracefulShutdownSignals: [.sigterm], logger: logger).run()
    }

    static func vapor(_ configuration: ImageServerConfiguration, port: Int) async throws {
        var environment = Vapor.Environment.production
        environment.arguments = ["vapor", "serve", "--hostname", "127.0.0.1", "--port", String(port)]
        let app = try await Vapor.Application.make(environment)
        app.logger.logLevel = .warning
        let proxy = try app.makeImageProxy(configuration: configuration)
        app.middleware.use(ImageProxyVaporMiddleware(proxy: proxy))
        try await app.execute()
        try await app.asyncShutdown()
    }
}
