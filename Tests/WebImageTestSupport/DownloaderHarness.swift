import Foundation
package import WebImageTesting
@testable package import WebImageDownloader

/// Runs `body` with an origin server and a downloader, and shuts both down whatever happens.
package func withDownloader(
    _ configuration: ImageDownloaderConfiguration = ImageDownloaderConfiguration(),
    telemetry: Telemetry = .default,
    tls: Bool = false,
    http2: Bool = false,
    _ body: (OriginServer, ImageDownloader) async throws -> Void
) async throws {
    let origin = try await OriginServer.start(tls: tls, http2: http2)
    let downloader = ImageDownloader(configuration: configuration, telemetry: telemetry)
    do {
        try await body(origin, downloader)
    } catch {
        try? await downloader.shutdown()
        try? await origin.shutdown()
        throw error
    }
    try await downloader.shutdown()
    try await origin.shutdown()
}
