import ArgumentParser
import AsyncHTTPClient
import Foundation
import WebImage
import WebImageTestSupport

/// `webimage demo`: starts a local origin server and loads its images through the library.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Serve sample images on 127.0.0.1 and load them, printing what happened.",
        discussion: "Needs no network beyond loopback. Example: webimage demo"
    )

    private static let images = [
        ("gradient-rgba.png", "image/png"), ("gradient.jpg", "image/jpeg"),
        ("gradient-progressive.jpg", "image/jpeg"), ("animated.gif", "image/gif"),
        ("gradient-lossy.webp", "image/webp"),
    ]

    func run() async throws {
        let origin = try await OriginServer.start()
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        print("Origin server listening on \(origin.baseURL)\n")
        print(Row.header)
        do {
            for (name, contentType) in Self.images {
                origin.route("/" + name, .ok(try Self.bundledImage(name), contentType: contentType))
                print(try await load(origin.baseURL + "/" + name, client: client).line)
            }
        } catch {
            try? await client.shutdown()
            try? await origin.shutdown()
            throw error
        }
        try await client.shutdown()
        try await origin.shutdown()
        print("\n\(origin.requests.count) requests served.")
    }

    private func load(_ url: String, client: HTTPClient) async throws -> Row {
        let clock = ContinuousClock()
        let start = clock.now
        let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(15))
        let body = try await response.body.collect(upTo: 50 * 1024 * 1024)
        let bytes = Array(body.readableBytesView)
        let header = try ImageHeader(data: bytes)
        return Row(url: url, status: Int(response.status.code), bytes: bytes.count, header: header, elapsed: clock.now - start)
    }

    private static func bundledImage(_ name: String) throws -> [UInt8] {
        guard let url = Bundle.module.url(forResource: "DemoImages/" + name, withExtension: nil) else {
            throw ValidationError("missing bundled image \(name)")
        }
        return [UInt8](try Data(contentsOf: url))
    }

    private struct Row {
        static let header = "path".padding(28) + "status".padding(8) + "bytes".padding(8) + "format".padding(8)
            + "size".padding(10) + "progressive".padding(13) + "time"
        let url: String
        let status: Int
        let bytes: Int
        let header: ImageHeader
        let elapsed: Duration

        var line: String {
            let path = URL(string: url)?.path ?? url
            let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
            return path.padding(28) + String(status).padding(8) + String(bytes).padding(8)
                + header.format.rawValue.padding(8) + "\(header.width)x\(header.height)".padding(10)
                + (header.isProgressive ? "yes" : "no").padding(13) + String(format: "%.2f ms", milliseconds)
        }
    }
}

extension String {
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
