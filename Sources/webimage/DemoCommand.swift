import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import WebImage
import WebImageServer

/// `webimage demo`: starts an origin server on 127.0.0.1 and shows the library at work.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Serve sample images on 127.0.0.1 and show the library loading them, printing a table of what happened.",
        discussion: """
            Needs no network beyond loopback: a cold load of each format (network), the same \
            through a fresh manager (disk) and again (memory), 500 concurrent loads of one URL \
            (one origin request), a thumbnail, a transform, a progressive JPEG arriving scan by \
            scan, an animated GIF's frames, and the image proxy of `webimage serve` answering a \
            signed URL. Example: webimage demo
            """
    )

    private static let samples = [
        ("gradient-rgba.png", "image/png"), ("gradient.jpg", "image/jpeg"),
        ("animated.gif", "image/gif"), ("gradient-lossy.webp", "image/webp"),
    ]

    @OptionGroup var outputOptions: OutputOptions

    func run() async throws {
        outputOptions.bootstrapLogging()
        let origin = try await DemoOrigin.start()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let downloader = ImageDownloader()
        print("Origin server on \(origin.baseURL); disk cache in \(directory.path)\n")
        print(Row.header)
        do {
            try serve(origin)
            try await show(origin: origin, downloader: downloader, directory: directory)
        } catch {
            try? await downloader.shutdown()
            try? await origin.shutdown()
            throw error
        }
        try await downloader.shutdown()
        try await origin.shutdown()
        print("\n\(origin.totalRequests) requests reached the origin; everything else came from the caches.")
    }

    private func serve(_ origin: DemoOrigin) throws {
        for (name, contentType) in Self.samples {
            origin.route("/" + name, DemoOrigin.Route(body: try Self.bundledImage(name), contentType: contentType))
        }
        let jpeg = try Self.bundledImage("gradient.jpg")
        origin.route("/popular.jpg", DemoOrigin.Route(body: jpeg, contentType: "image/jpeg", headerDelay: .milliseconds(20)))
        origin.route(
            "/progressive.jpg",
            DemoOrigin.Route(
                body: try Self.bundledImage("large-progressive.jpg"), contentType: "image/jpeg",
                drip: (bytes: 600, interval: .milliseconds(20))))
    }

    private func show(origin: DemoOrigin, downloader: ImageDownloader, directory: URL) async throws {
        let loader = LoadersManager(loaders: [downloader])
        let first = ImageManager(cache: ImageCache(disk: try DiskCache(directory: directory)), loader: loader)
        for (name, _) in Self.samples {
            print(try await timed("cold load", name) { try await first.image(for: origin.url("/" + name), options: .waitStoreCache) }.line)
        }
        (first.cache as? ImageCache)?.disk?.close()
        let second = ImageManager(cache: ImageCache(disk: try DiskCache(directory: directory)), loader: loader)
        for (name, _) in Self.samples {
            print(try await timed("fresh manager", name) { try await second.image(for: origin.url("/" + name)) }.line)
        }
        for (name, _) in Self.samples {
            print(try await timed("again", name) { try await second.image(for: origin.url("/" + name)) }.line)
        }
        try await concurrentLoads(second, origin: origin)
        var thumbnail = LoadContext()
        thumbnail.imageThumbnailPixelSize = (width: 16, height: 16)
        print(
            try await timed("thumbnail 16x16", "gradient.jpg") {
                try await second.image(for: origin.url("/gradient.jpg"), context: thumbnail)
            }.line)
        var transform = LoadContext()
        transform.imageTransformer = try TransformSpec.parse("resize:32x32:aspectfill,round:8")
        print(
            try await timed("transform", "gradient.jpg") { try await second.image(for: origin.url("/gradient.jpg"), context: transform) }
                .line)
        try await progressive(second, origin: origin)
        try await proxy(second, origin: origin, directory: directory)
        let gif = try await second.image(for: origin.url("/animated.gif"))
        let durations = gif.image?.frames.map { String(format: "%.0f", $0.duration.milliseconds) }.joined(separator: "/") ?? "-"
        print(
            Row(
                step: "animated frames", path: "animated.gif", from: "memory",
                result: "\(gif.image?.frames.count ?? 0) frames, \(durations) ms, loop \(gif.image?.loopCount ?? 0)", elapsed: .zero
            ).line)
    }

    /// `webimage serve` in this process over the same origin: one signed URL, fetched, resized,
    /// encoded as WebP and stored by the proxy, then loaded like any image.
    private func proxy(_ manager: ImageManager, origin: DemoOrigin, directory: URL) async throws {
        let key = SigningKey(key: Array(UUID().uuidString.utf8), salt: Array("webimage demo".utf8))
        var configuration = ImageServerConfiguration()
        configuration.port = 0
        configuration.signingKeys = [key]
        configuration.allowsLoopbackSources = true
        configuration.cacheDirectory = directory.appendingPathComponent("serve")
        let logger = Logger(label: "webimage.demo.serve")
        let server = try ImageServer(configuration: configuration, logger: logger)
        let group = ServiceGroup(services: [server], logger: logger)
        let running = Task { try await group.run() }
        let row: Result<Row, any Error>
        do {
            let port = await server.port
            let path = URLSigner(keys: [key]).sign("/rs:fill:64:48/q:80/plain/\(origin.url("/gradient.jpg").absoluteString)@webp")
            let url = URL(string: "http://127.0.0.1:\(port)\(path)")!
            row = .success(try await timed("image proxy", "gradient.jpg") { try await manager.image(for: url) })
        } catch {
            row = .failure(error)
        }
        await group.triggerGracefulShutdown()
        try await running.value
        var line = try row.get().line
        line += "  (signed /rs:fill:64:48/q:80/plain/…@webp on 127.0.0.1)"
        print(line)
    }

    private func concurrentLoads(_ manager: ImageManager, origin: DemoOrigin) async throws {
        let start = ContinuousClock.now
        let loaded = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<500 { group.addTask { try await manager.image(for: origin.url("/popular.jpg")).image != nil } }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        let requests = origin.requestCount("/popular.jpg")
        print(
            Row(
                step: "500 at once", path: "popular.jpg", from: "network",
                result: "\(loaded) images, \(requests) origin request\(requests == 1 ? "" : "s")", elapsed: ContinuousClock.now - start
            ).line)
    }

    private func progressive(_ manager: ImageManager, origin: DemoOrigin) async throws {
        let start = ContinuousClock.now
        var scans: [String] = []
        for try await result in manager.images(for: ImageRequest(url: origin.url("/progressive.jpg"), options: .progressiveLoad)) {
            let at = String(format: "%.0f", (ContinuousClock.now - start).milliseconds)
            if !result.isFinished { scans.append(at) }
        }
        print(
            Row(
                step: "progressive", path: "progressive.jpg", from: "network",
                result: "\(scans.count) partial images (at \(scans.joined(separator: ", ")) ms), then the final one",
                elapsed: ContinuousClock.now - start
            ).line)
    }

    private func timed(_ step: String, _ path: String, _ body: () async throws -> ImageResult) async throws -> Row {
        let start = ContinuousClock.now
        let result = try await body()
        let image = result.image
        let from = ["memory", "disk", "network"][result.cacheType == .memory ? 0 : result.cacheType == .disk ? 1 : 2]
        let shape =
            image.map {
                "\($0.sourceFormat?.rawValue ?? "?") \($0.pixelWidth)x\($0.pixelHeight), \($0.frames.count) frame\($0.frames.count == 1 ? "" : "s")"
            } ?? "bytes only"
        return Row(step: step, path: path, from: from, result: shape, elapsed: ContinuousClock.now - start)
    }

    private static func bundledImage(_ name: String) throws -> [UInt8] {
        guard let url = Bundle.module.url(forResource: "DemoImages/" + name, withExtension: nil) else {
            throw CommandFailure("missing bundled image \(name)")
        }
        return [UInt8](try Data(contentsOf: url))
    }

    private struct Row {
        static let header = "step".padded(17) + "image".padded(21) + "from".padded(9) + "result".padded(56) + "time"
        let step: String
        let path: String
        let from: String
        let result: String
        let elapsed: Duration

        var line: String {
            step.padded(17) + path.padded(21) + from.padded(9) + result.padded(56) + String(format: "%.2f ms", elapsed.milliseconds)
        }
    }
}
