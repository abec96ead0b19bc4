import Foundation
import Logging
import MetricsTestKit
import Testing
import WebImage
import WebImageTesting
import WebImageTestSupport

/// A cache whose stores always fail, as a full disk's would; queries always miss.
private struct RefusingCache: ImageCaching {
    let stores = EventLog<CacheKey>()

    func query(_ key: CacheKey, options: ImageCacheOptions, cacheType: ImageCacheType) async -> ImageCacheResult { .miss }
    func store(_ image: Image?, data: Data?, for key: CacheKey, cacheType: ImageCacheType) async throws(WebImageError) {
        stores.record(key)
        throw WebImageError(.cacheIO, "write: No space left on device")
    }
    func remove(_ key: CacheKey, cacheType: ImageCacheType) async {}
    func contains(_ key: CacheKey, cacheType: ImageCacheType) async -> ImageCacheType { .none }
    func clear(_ cacheType: ImageCacheType) async {}
}

@Suite("ImageManager store failures")
struct ManagerStoreFailureTests {
    @Test("a failed background store is logged and counted, the image still delivered and the URL not blocked")
    func backgroundStore() async throws {
        try await ManagerHarness.run { harness in
            harness.servePNG("/a.png")
            let metrics = TestMetrics()
            let logs = EventLog<String>()
            let cache = RefusingCache()
            let manager = ImageManager(
                cache: cache, loader: harness.downloader, coders: harness.coders,
                telemetry: Telemetry(logHandlerFactory: { _ in EventLogHandler(entries: logs) }, metricsFactory: metrics))
            let result = try await manager.image(for: harness.origin.url("/a.png"))
            #expect(result.image?.pixelWidth == 64 && result.cacheType == .none)
            try await logs.waitFor("the failure logged") { $0.hasPrefix("warning a cache store failed") }
            #expect(try metrics.expectCounter("webimage_cache_store_failures_total").totalValue == 1)
            #expect(!manager.failedURLs.contains(harness.origin.url("/a.png")))
        }
    }

    @Test("with .waitStoreCache the load fails with the store's error, counted, and the URL is not blocked")
    func waitedStore() async throws {
        try await ManagerHarness.run { harness in
            harness.servePNG("/a.png")
            let metrics = TestMetrics()
            let manager = ImageManager(
                cache: RefusingCache(), loader: harness.downloader, coders: harness.coders, telemetry: Telemetry(metricsFactory: metrics))
            await #expect(throws: WebImageError(.cacheIO)) {
                try await manager.image(for: harness.origin.url("/a.png"), options: .waitStoreCache)
            }
            let failures = try metrics.expectCounter("webimage_cache_store_failures_total")
            #expect(failures.totalValue == 1)
            #expect(!manager.failedURLs.contains(harness.origin.url("/a.png")))
            let next = try await manager.image(for: harness.origin.url("/a.png"))
            #expect(next.image != nil, "the next load is not blocked")
        }
    }
}
