import Foundation
import Synchronization
import Testing
import WebImageTesting
@testable import WebImageDownloader
import WebImageTestSupport

/// Per-host politeness observed at the origin. 127.0.0.1 and localhost name the same origin
/// server but are two hosts to the downloader.
@Suite("Per-host politeness")
struct PolitenessTests {
    let png: [UInt8]

    init() throws {
        png = [UInt8](try Fixture.data("gradient-rgba.png"))
    }

    @Test("a host never has more than its limit running while another host proceeds")
    func perHostLimit() async throws {
        let origin = try await OriginServer.start()
        let downloader = ImageDownloader(
            configuration: ImageDownloaderConfiguration(
                maximumConcurrentDownloads: 8, hostPoliteness: HostPoliteness(maximumConcurrentDownloadsPerHost: 2), retryPolicy: .none))
        for index in 0..<5 { origin.route("/stall\(index)", OriginResponse(delivery: .neverRespond)) }
        origin.route("/b.png", .ok(png, contentType: "image/png"))
        let stalled = (0..<5).map { index in downloader.subscribe(origin.url("/stall\(index)"), options: LoadRequestOptions()) { _ in } }
        let outcomes = Outcomes()
        let other = (0..<3).map { index in
            downloader.subscribe(
                URL(string: "http://localhost:\(origin.port)/b.png?\(index)")!, options: LoadRequestOptions(), events: outcomes.handler())
        }
        try await outcomes.waitForResults(3)
        #expect(outcomes.all.allSatisfy { (try? $0.get()) != nil }, "the other host's downloads all finished")
        // The first host's two may still be on their way to the origin: wait for their arrival.
        let arrived = Atomic(0)
        try await origin.waitFor("two requests to the stalling host") { event in
            guard case .requestReceived(let request) = event, request.path.hasPrefix("/stall") else { return false }
            return arrived.add(1, ordering: .relaxed).newValue == 2
        }
        let stalledPaths = Set(origin.requests.map(\.path).filter { $0.hasPrefix("/stall") })
        #expect(stalledPaths.count == 2, "two of the first host's five reached the origin: \(stalledPaths)")
        for token in stalled + other { token.cancel() }
        try await downloader.shutdown()
        try await origin.shutdown()
    }
}
