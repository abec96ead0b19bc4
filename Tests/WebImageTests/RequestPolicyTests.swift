import Foundation
import Testing
import WebImageTesting
@testable import WebImage
@testable import WebImageDownloader
import WebImageTestSupport

/// Per-request retry decisions, progress pacing and alternative sources, against the origin.
@Suite("Retry decisions, progress pacing, alternative sources")
struct RequestPolicyTests {
    let png: [UInt8]

    init() throws {
        png = [UInt8](try Fixture.data("gradient-rgba.png"))
    }

    @Test("a request's own retry policy replaces the downloader's; a decision replaces the default rule")
    func retryPolicies() async throws {
        let origin = try await OriginServer.start()
        for path in ["/flaky", "/gone", "/busy"] {
            let first = path == "/gone" ? OriginResponse.status(404) : .status(503)
            origin.route(path, sequence: [first, .ok(png, contentType: "image/png")])
        }
        let quick = RetryPolicy(maximumRetries: 1, baseDelay: .milliseconds(1))
        let strict = ImageDownloader(configuration: ImageDownloaderConfiguration(retryPolicy: .none))
        let retried = try await strict.loadData(origin.url("/flaky"), options: LoadRequestOptions(retryPolicy: quick))
        #expect(retried.data == Data(png))
        #expect(origin.requestCount("/flaky") == 2)

        var only404 = quick
        only404.decision = RetryDecision { error, _ in error.code == .badStatus(404) }
        let custom = ImageDownloader(configuration: ImageDownloaderConfiguration(retryPolicy: only404))
        #expect(try await custom.loadData(origin.url("/gone")).data == Data(png), "the decision retried a 404")
        await #expect(throws: WebImageError(.badStatus(503))) { try await custom.loadData(origin.url("/busy")) }
        #expect(origin.requestCount("/busy") == 1, "and not a 503")
        try await strict.shutdown()
        try await custom.shutdown()
        try await origin.shutdown()
    }

    @Test("minimumProgressInterval leaves out reports closer than the interval, keeping the last")
    func progressPacing() async throws {
        let origin = try await OriginServer.start()
        let body = [UInt8](repeating: 7, count: 100 * 1024)
        origin.route(
            "/big",
            OriginResponse(headers: [("Content-Type", "image/png")], body: body, delivery: .drip(bytes: 2048, every: .milliseconds(1))))
        var counts: [Int] = []
        for interval in [0, 0.25] {
            let downloader = ImageDownloader(
                configuration: ImageDownloaderConfiguration(retryPolicy: .none, minimumProgressInterval: interval))
            let outcomes = Outcomes()
            let token = downloader.subscribe(origin.url("/big"), options: LoadRequestOptions(), events: outcomes.handler())
            try await outcomes.waitForResults(1)
            let reports = outcomes.progress.withLock { $0 }
            #expect(reports.last?.0 == Int64(body.count), "the last report says every byte arrived")
            counts.append(reports.count)
            token.cancel()
            try await downloader.shutdown()
        }
        #expect(counts[0] > 10, "unpaced: a report per piece (\(counts[0]))")
        #expect(counts[1] <= 6, "paced at a quarter: the first, at most four steps, and the last (\(counts[1]))")
        try await origin.shutdown()
    }

    @Test("alternative sources are tried in order when the URL fails; the image is cached under the URL's key")
    func alternativeSources() async throws {
        try await ManagerHarness.run { harness in
            harness.origin.route("/primary.png", .status(404))
            harness.origin.route("/broken-mirror.png", .htmlPage())
            harness.servePNG("/mirror.png")
            let manager = try harness.makeManager()
            var context = LoadContext()
            context.alternativeSources = [harness.origin.url("/broken-mirror.png"), harness.origin.url("/mirror.png")]
            let primary = harness.origin.url("/primary.png")
            let result = try await manager.image(for: primary, context: context)
            #expect(result.image?.pixelWidth == 64)
            #expect(result.finalURL == harness.origin.url("/mirror.png"))
            #expect(!manager.failedURLs.contains(primary), "a load that succeeded blocks nothing")
            let again = try await manager.image(for: primary)
            #expect(again.cacheType == .memory, "cached under the primary URL's key")
            #expect(harness.origin.requestCount("/primary.png") == 1)

            var none = LoadContext()
            none.alternativeSources = [harness.origin.url("/broken-mirror.png")]
            await #expect(throws: WebImageError(.badStatus(404))) {
                try await manager.image(for: harness.origin.url("/primary.png?other"), options: .retryFailed, context: none)
            }
        }
    }
}
