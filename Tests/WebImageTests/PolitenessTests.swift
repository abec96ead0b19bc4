import Foundation
import Synchronization
import Testing
import WebImageTesting
@testable import WebImageDownloader

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
        let stalled = (0..<5).map { index in downloader.load(origin.url("/stall\(index)"), options: LoadRequestOptions()) { _ in } }
        let outcomes = Outcomes()
        let other = (0..<3).map { index in
            downloader.load(
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

    @Test("a 429 with Retry-After holds that host's queued downloads, not another host's")
    func retryAfterHoldsTheHost() async throws {
        let origin = try await OriginServer.start()
        let downloader = ImageDownloader(
            configuration: ImageDownloaderConfiguration(hostPoliteness: HostPoliteness(), retryPolicy: .none))
        origin.route("/busy", .retryAfter(seconds: 1))
        origin.route("/after.png", .ok(png, contentType: "image/png"))
        origin.route("/b.png", .ok(png, contentType: "image/png"))
        await #expect(throws: WebImageError(.badStatus(429))) { try await downloader.loadData(origin.url("/busy")) }
        let held = Outcomes()
        let heldToken = downloader.load(origin.url("/after.png"), options: LoadRequestOptions(), events: held.handler())
        let other = try await downloader.loadData(URL(string: "http://localhost:\(origin.port)/b.png")!)
        #expect(other.data == Data(png))
        #expect(origin.requestCount("/after.png") == 0, "queued first, yet held while the other host was served")
        try await held.waitForResults(1)
        #expect((try? held.all.first?.get())?.data == Data(png), "it starts once the hold is over")
        heldToken.cancel()
        try await downloader.shutdown()
        try await origin.shutdown()
    }
}
