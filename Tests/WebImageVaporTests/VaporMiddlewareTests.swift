#if Vapor
import Foundation
import InMemoryLogging
import InMemoryTracing
import Testing
import Vapor
import VaporTesting
import WebImage
import WebImageTesting
import WebImageTestSupport
import WebImageVapor

// The README's Vapor example, verbatim.

func configure(_ app: Application, images configuration: ImageServerConfiguration) throws {
    app.get("hello") { _ in "hello\n" }
    let proxy = try app.makeImageProxy(configuration: configuration)  // shut down with the application
    app.middleware.use(ImageProxyVaporMiddleware(proxy: proxy, prefix: "/images"))
}

/// The image proxy in a Vapor application (issue 63): the README's `configure(_:images:)` in
/// process (VaporTesting's in-memory responder) and over a socket on 127.0.0.1 (its live
/// tester, which starts Vapor's HTTP server), answering as `webimage serve` and the Hummingbird
/// middleware answer the same paths.
@Suite("WebImageVapor: the proxy as Vapor middleware")
struct VaporMiddlewareTests {
    /// An origin with one JPEG (with an `ETag`, which the proxy's answers carry on), a configuration with the harness's key and a cache directory, and
    /// the signed path of a 32 px PNG of it.
    private static func fixture() async throws -> (OriginServer, TemporaryDirectory, ImageServerConfiguration, String) {
        let origin = try await OriginServer.start()
        origin.route(
            "/photo.jpg",
            OriginResponse(headers: [("Content-Type", "image/jpeg")], body: Array(try Fixture.data("gradient.jpg")), etag: "\"v1\""))
        let directory = try TemporaryDirectory("vapor")
        var configuration = ServerHarness.configuration()
        configuration.cacheDirectory = directory.url
        let signed = URLSigner(keys: [ServerHarness.exampleKey]).sign("/rs:fit:32:32/plain/\(origin.url("/photo.jpg").absoluteString)@png")
        return (origin, directory, configuration, signed)
    }

    /// VaporTesting's `withApp` with the README's `configure(_:images:)`.
    private static func withImages(_ configuration: ImageServerConfiguration, _ test: (Application) async throws -> Void) async throws {
        let setUp: (Application) async throws -> Void = { app in try configure(app, images: configuration) }
        try await withApp(configure: setUp, test)
    }

    @Test(
        "in process and over a socket: a signed resize, its HEAD from the result cache, unsigned paths refused, other paths the app's",
        arguments: [false, true])
    func answers(overSocket: Bool) async throws {
        let (origin, directory, configuration, signed) = try await Self.fixture()
        try await Self.withImages(configuration) { app in
            let tester = try app.testing(method: overSocket ? .running(hostname: "127.0.0.1", port: 0) : .inMemory)
            try await tester.test(.GET, "/hello") { response in
                #expect(response.status == .ok && response.body.string == "hello\n")
            }
            try await tester.test(.GET, "/images" + signed) { response in
                #expect(response.status == .ok && response.headers.first(name: "Content-Type") == "image/png")
                let header = try ImageHeader(data: Data(buffer: response.body))
                #expect(max(header.width, header.height) == 32)
                #expect(response.headers.first(name: "Content-Security-Policy")?.contains("sandbox") == true)
                #expect(response.headers.first(name: "ETag") != nil && response.headers.first(name: "Cache-Control") != nil)
            }
            try await tester.test(.HEAD, "/images" + signed) { response in
                // Vapor's convention: a HEAD gets the GET's response, whose body its server leaves off the wire.
                #expect(response.status == .ok && response.headers.first(name: "Content-Type") == "image/png")
                if overSocket { #expect(response.body.readableBytes == 0) }
            }
            try await tester.test(.GET, "/images/unsafe/w:10/plain/http://127.0.0.1/a.jpg") { response in
                #expect(response.status == .forbidden, "unsigned paths are refused as the server refuses them")
            }
            try await tester.test(.GET, "/images" + signed + "?x=1") { response in
                #expect(response.status == .badRequest && response.body.string.contains("query"))
            }
            try await tester.test(.GET, "/elsewhere") { response in
                #expect(response.status == .notFound, "outside the prefix the application's routes answer")
            }
        }
        #expect(origin.requestCount("/photo.jpg") == 1, "the HEAD was answered from the result cache")
        _ = directory
        try await origin.shutdown()
    }

    @Test("a conditional GET with the ETag is a 304; a configuration out of range is refused when the proxy is made")
    func validatorsAndValidation() async throws {
        let (origin, directory, configuration, signed) = try await Self.fixture()
        try await Self.withImages(configuration) { app in
            let tester = try app.testing()
            var etag = ""
            try await tester.test(.GET, "/images" + signed) { response in
                etag = response.headers.first(name: "ETag") ?? ""
            }
            #expect(!etag.isEmpty)
            try await tester.test(.GET, "/images" + signed, headers: ["If-None-Match": etag]) { response in
                #expect(response.status == .notModified && response.body.readableBytes == 0)
            }
        }
        var broken = configuration
        broken.defaultQuality = 500
        await #expect(throws: WebImageError.self) {
            try await Self.withImages(broken) { _ in }
        }
        _ = directory
        try await origin.shutdown()
    }

    @Test("a route handler loads through an ImageManager within the request's trace; a failure is logged on the request's logger")
    func managerInRoute() async throws {
        let tracer = InMemoryTracer()
        let origin = try await OriginServer.start()
        origin.route("/a.png", .ok(Array(try Fixture.data("gradient-rgba.png")), contentType: "image/png"))
        origin.route("/gone.png", .status(404))
        let downloader = ImageDownloader(telemetry: Telemetry(tracer: tracer))
        let manager = ImageManager(cache: ImageCache(disk: nil), loader: downloader)
        let log = InMemoryLogHandler()
        try await withApp { app in
            app.logger = Logger(label: "app") { _ in log }
            app.get("avatar", ":name") { req async throws -> String in
                // What Vapor's TracingMiddleware does with the application's tracer.
                let span = tracer.startSpan("GET /avatar", context: req.serviceContext, ofKind: .server)
                defer { span.end() }
                req.serviceContext = span.context
                let name = req.parameters.get("name") ?? ""
                return "\(try await req.image(for: origin.url("/\(name)"), manager: manager).image?.pixelWidth ?? 0)"
            }
            try await app.testing().test(.GET, "/avatar/a.png") { response in
                #expect(response.status == .ok && response.body.string == "64")
            }
            try await app.testing().test(.GET, "/avatar/gone.png") { response in
                #expect(response.status != .ok)
            }
        }
        let routes = tracer.finishedSpans.filter { $0.operationName == "GET /avatar" }
        let downloads = tracer.finishedSpans.filter { $0.kind == .client }
        #expect(routes.count == 2 && downloads.count == 2)
        for (route, download) in zip(routes, downloads) {
            #expect(download.traceID == route.traceID && download.parentSpanID == route.spanID, "the download is beneath the request")
        }
        let failure = log.entries.first { $0.message.description == "image load failed" }
        #expect(failure?.metadata["url"]?.description == origin.url("/gone.png").absoluteString)
        #expect(failure?.metadata["request-id"] != nil, "the request's logger carries its id")
        try await downloader.shutdown()
        try await origin.shutdown()
    }
}
#endif
