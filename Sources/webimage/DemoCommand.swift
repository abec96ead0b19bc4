import ArgumentParser
import Foundation
import WebImage
import WebImageTestSupport

/// `webimage demo`: starts a local origin server and shows the library loading, decoding and
/// caching its images.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Serve sample images on 127.0.0.1 and load them through the caches, printing what happened.",
        discussion: "Needs no network beyond loopback. Example: webimage demo"
    )

    private static let images = [
        ("gradient-rgba.png", "image/png"), ("gradient.jpg", "image/jpeg"),
        ("gradient-progressive.jpg", "image/jpeg"), ("animated.gif", "image/gif"),
        ("gradient-lossy.webp", "image/webp"),
    ]

    func run() async throws {
        let origin = try await OriginServer.start()
        let downloader = ImageDownloader()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-demo-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        print("Origin server listening on \(origin.baseURL); disk cache in \(directory.path)\n")
        print(Row.header)
        do {
            for (name, contentType) in Self.images {
                origin.route("/" + name, .ok(try Self.bundledImage(name), contentType: contentType))
            }
            let cold = ImageCache(disk: try DiskCache(directory: directory))
            for (name, _) in Self.images { print(try await load(origin.url("/" + name), cache: cold, downloader: downloader).line) }
            cold.disk?.close()
            let warm = ImageCache(disk: try DiskCache(directory: directory))
            for _ in 0..<2 {
                for (name, _) in Self.images { print(try await load(origin.url("/" + name), cache: warm, downloader: downloader).line) }
            }
        } catch {
            try? await downloader.shutdown()
            try? await origin.shutdown()
            throw error
        }
        try await downloader.shutdown()
        try await origin.shutdown()
        print("\n\(origin.requests.count) requests reached the origin; the rest came from the disk or memory cache.")
    }

    /// Memory, then disk, then the network; what the network brings is decoded (when a coder
    /// exists for it) and cached.
    private func load(_ url: URL, cache: ImageCache, downloader: ImageDownloader) async throws -> Row {
        let clock = ContinuousClock()
        let start = clock.now
        let key = CacheKey(url.absoluteString)
        let cached = await cache.query(key, options: .queryMemoryData)
        if cached.isHit, let data = cached.data {
            return Row(url: url, source: cached.cacheType == .memory ? "memory" : "disk", data: data, image: cached.image, elapsed: clock.now - start)
        }
        let data = try await downloader.loadData(url).data
        let image = try? CodersManager.shared.decode(data)
        if let image { try await cache.store(image, data: data, for: key) }
        return Row(url: url, source: "network", data: data, image: image, elapsed: clock.now - start)
    }

    private static func bundledImage(_ name: String) throws -> [UInt8] {
        guard let url = Bundle.module.url(forResource: "DemoImages/" + name, withExtension: nil) else {
            throw ValidationError("missing bundled image \(name)")
        }
        return [UInt8](try Data(contentsOf: url))
    }

    private struct Row {
        static let header = "path".padding(28) + "from".padding(9) + "format".padding(8) + "size".padding(10)
            + "bytes".padding(8) + "decoded".padding(9) + "time"
        let url: URL
        let source: String
        let data: Data
        let image: Image?
        let elapsed: Duration

        var line: String {
            let path = url.path
            let header = try? ImageHeader(data: data)
            let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
            return path.padding(28) + source.padding(9) + (header?.format.rawValue ?? "?").padding(8)
                + (header.map { "\($0.width)x\($0.height)" } ?? "?").padding(10) + String(data.count).padding(8)
                + (image == nil ? "no coder" : "yes").padding(9) + String(format: "%.2f ms", milliseconds)
        }
    }
}

extension String {
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
