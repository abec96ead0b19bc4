import Foundation
import Testing
import WebImageTesting
@testable import WebImage
@testable import WebImageCaching
@testable import WebImageCodecs
import WebImageTestSupport

/// HTTP freshness: the headers' arithmetic as values, then a manager that respects it against
/// the origin, with a clock the test moves (no sleeping).
@Suite("HTTP freshness")
struct FreshnessTests {
    let received = Date(timeIntervalSince1970: 1_800_000_000)

    private func freshness(
        _ cacheControl: String?, expires: String? = nil, date: String? = nil, age: String? = nil, lastModified: String? = nil
    ) -> HTTPFreshness {
        HTTPFreshness(cacheControl: cacheControl, expires: expires, date: date, age: age, lastModified: lastModified, receivedAt: received)
    }

    private func http(_ offset: TimeInterval) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: received.addingTimeInterval(offset))
    }

    @Test("max-age, s-maxage ignored, Expires against Date, Age, no-cache, must-revalidate, immutable, the heuristic")
    func arithmetic() {
        #expect(freshness("max-age=60").freshUntil == received.addingTimeInterval(60))
        #expect(freshness("public, s-maxage=600, max-age=60").freshUntil == received.addingTimeInterval(60), "s-maxage is a shared cache's")
        #expect(freshness("max-age=60", age: "50").freshUntil == received.addingTimeInterval(10), "Age is subtracted")
        #expect(freshness("max-age=60", date: http(-20)).freshUntil == received.addingTimeInterval(40), "so is the time since Date")
        #expect(freshness(nil, expires: http(300), date: http(0)).freshUntil == received.addingTimeInterval(300))
        #expect(freshness(nil, expires: "0").freshUntil == received, "an Expires that does not parse has expired")
        #expect(freshness("max-age=60", expires: http(3600)).freshUntil == received.addingTimeInterval(60), "max-age wins over Expires")
        #expect(
            freshness(nil, date: http(0), lastModified: http(-10_000)).freshUntil == received.addingTimeInterval(1000), "10% of its age")
        #expect(freshness(nil, date: http(0), lastModified: http(-10_000_000)).lifetime == 86_400, "capped at a day")
        #expect(freshness(nil).freshUntil == received, "no headers: stale at once")
        let noCache = freshness("no-cache, max-age=600")
        #expect(noCache.state(at: received) == .stale)
        #expect(noCache.mustRevalidate)
        let immutable = freshness("max-age=31536000, immutable")
        #expect(immutable.state(at: received.addingTimeInterval(86_400)) == .fresh)
        let swr = freshness("max-age=10, stale-while-revalidate=60")
        #expect(swr.state(at: received.addingTimeInterval(5)) == .fresh)
        #expect(swr.state(at: received.addingTimeInterval(30)) == .staleWhileRevalidate)
        #expect(swr.state(at: received.addingTimeInterval(71)) == .stale)
        #expect(freshness("max-age=10, stale-while-revalidate=60, must-revalidate").state(at: received.addingTimeInterval(30)) == .stale)
        let renewed = freshness("max-age=60").renewed(
            cacheControl: nil, expires: nil, date: nil, age: nil, lastModified: nil, receivedAt: received.addingTimeInterval(100))
        #expect(renewed.freshUntil == received.addingTimeInterval(160), "a 304 without caching headers renews the old lifetime")
    }

    @Test("HTTP dates are parsed by hand, exactly, and anything but an IMF-fixdate is refused")
    func httpDates() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT")?.timeIntervalSince1970 == 784_111_777)
        #expect(HTTPDate.parse("Tue, 29 Feb 2028 23:59:59 GMT")?.timeIntervalSince1970 == 1_835_481_599)
        #expect(HTTPDate.parse("Wed, 31 Dec 1969 23:59:59 GMT")?.timeIntervalSince1970 == -1)
        for text in [
            "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:37 PST", "0", "-1", "",
            "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nox 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT",
        ] {
            #expect(HTTPDate.parse(text) == nil, "\(text)")
        }
        #expect(HTTPDate.parse(http(0)) == received, "agrees with Foundation's formatter")
    }

    @Test("freshness is kept in the journal and survives reopening; updating it keeps the bytes")
    func persisted() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-freshness-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let stored = freshness("max-age=60, stale-while-revalidate=30")
        do {
            let disk = try DiskCache(directory: directory)
            try disk.store(Data([1, 2, 3]), for: "a", metadata: DiskCacheMetadata(etag: "\"v1\"", freshness: stored))
            var updated = try #require(disk.metadata(for: "a"))
            updated.freshness = freshness("max-age=120")
            try disk.updateMetadata(updated, for: "a")
            try disk.flush()
            disk.close()
        }
        let reopened = try DiskCache(directory: directory)
        #expect(reopened.metadata(for: "a")?.freshness == freshness("max-age=120"))
        #expect(reopened.metadata(for: "a")?.etag == "\"v1\"")
        #expect(try reopened.data(for: "a") == Data([1, 2, 3]))
        reopened.close()
    }

    /// A manager that respects caching headers, on a clock the test sets.
    private func manager(_ harness: ManagerHarness, clock: Locked<Date>) throws -> ImageManager {
        ImageManager(
            cache: try harness.makeCache(), loader: harness.downloader, coders: harness.coders,
            configuration: ImageManagerConfiguration(cacheFreshness: .respectCacheControl(now: { clock.withLock { $0 } })))
    }

    private func serve(_ harness: ManagerHarness, _ path: String, cacheControl: String) {
        harness.origin.route(
            path,
            OriginResponse(
                headers: [("Content-Type", "image/png"), ("Cache-Control", cacheControl)], body: [UInt8](harness.png), etag: "\"v1\""))
    }

    @Test("within max-age no request; after it one conditional request, answered 304, renews it; the default never asks")
    func maxAge() async throws {
        try await ManagerHarness.run { harness in
            let clock = Locked(Date())
            let manager = try manager(harness, clock: clock)
            serve(harness, "/a.png", cacheControl: "max-age=60")
            let url = harness.origin.url("/a.png")
            // Waiting for the store: until the disk has the entry's freshness, the image just
            // downloaded counts as fresh.
            _ = try await manager.image(for: url, options: .waitStoreCache)
            clock.withLock { $0 += 30 }
            #expect(try await manager.image(for: url).cacheType == .memory)
            #expect(harness.origin.requestCount("/a.png") == 1, "fresh: no request")
            clock.withLock { $0 += 40 }
            let revalidated = try await manager.image(for: url)
            #expect(revalidated.image != nil)
            let requests = harness.origin.requests(to: "/a.png")
            #expect(requests.count == 2)
            #expect(requests.last?.header("If-None-Match") == "\"v1\"", "the stale entry was revalidated, not downloaded again")
            clock.withLock { $0 += 30 }
            _ = try await manager.image(for: url)
            #expect(harness.origin.requestCount("/a.png") == 2, "the 304 renewed the freshness")

            let plain = try harness.makeManager()
            clock.withLock { $0 += 3600 }
            _ = try await plain.image(for: url)
            #expect(harness.origin.requestCount("/a.png") == 2, "the default uses the cached image as it is")
        }
    }

    @Test("no-store is never stored; no-cache is revalidated on every load")
    func noStoreAndNoCache() async throws {
        try await ManagerHarness.run { harness in
            let clock = Locked(Date())
            let manager = try manager(harness, clock: clock)
            serve(harness, "/private.png", cacheControl: "no-store")
            serve(harness, "/ask.png", cacheControl: "no-cache")
            let unstored = harness.origin.url("/private.png")
            _ = try await manager.image(for: unstored, options: .waitStoreCache)
            _ = try await manager.image(for: unstored, options: .waitStoreCache)
            #expect(harness.origin.requestCount("/private.png") == 2)
            #expect(await manager.cache.contains(CacheKey(unstored.absoluteString), cacheType: .all) == ImageCacheType.none, "in no tier")
            let asked = harness.origin.url("/ask.png")
            for _ in 0..<3 { _ = try await manager.image(for: asked, options: .waitStoreCache) }
            let requests = harness.origin.requests(to: "/ask.png")
            #expect(requests.count == 3)
            #expect(requests.dropFirst().allSatisfy { $0.header("If-None-Match") == "\"v1\"" })
        }
    }

    @Test("stale-while-revalidate: the stale image at once, one revalidation behind it")
    func staleWhileRevalidate() async throws {
        try await ManagerHarness.run { harness in
            let clock = Locked(Date())
            let manager = try manager(harness, clock: clock)
            serve(harness, "/swr.png", cacheControl: "max-age=10, stale-while-revalidate=600")
            let url = harness.origin.url("/swr.png")
            _ = try await manager.image(for: url, options: .waitStoreCache)
            clock.withLock { $0 += 20 }
            let served = try await manager.image(for: url)
            #expect(served.cacheType == .memory, "served from the cache without waiting")
            try await harness.origin.waitForRequests(2, to: "/swr.png")
            #expect(harness.origin.requests(to: "/swr.png").last?.header("If-None-Match") == "\"v1\"")
            for revalidation in manager.revalidations.withLock({ Array($0.values) }) { await revalidation.value }
            _ = try await manager.image(for: url)
            #expect(harness.origin.requestCount("/swr.png") == 2, "the revalidation renewed it")
        }
    }

    @Test("stale-while-revalidate: a changed image found behind the stale one replaces it in the cache")
    func staleWhileRevalidateChanged() async throws {
        try await ManagerHarness.run { harness in
            let clock = Locked(Date())
            let manager = try manager(harness, clock: clock)
            let headers = [("Content-Type", "image/jpeg"), ("Cache-Control", "max-age=10, stale-while-revalidate=600")]
            // The second answer is another image: a new ETag (the request's "v1" no longer matches), other bytes.
            harness.origin.route(
                "/changing",
                sequence: [
                    OriginResponse(headers: headers, body: [UInt8](harness.png), etag: "\"v1\""),
                    OriginResponse(headers: headers, body: [UInt8](harness.jpeg), etag: "\"v2\""),
                ])
            let url = harness.origin.url("/changing")
            _ = try await manager.image(for: url, options: .waitStoreCache)
            clock.withLock { $0 += 20 }
            // .waitStoreCache: the revalidation it starts ends once the new image is stored.
            #expect(try await manager.image(for: url, options: .waitStoreCache).cacheType == .memory, "the stale image at once")
            try await harness.origin.waitForRequests(2, to: "/changing")
            for revalidation in manager.revalidations.withLock({ Array($0.values) }) { await revalidation.value }
            let key = CacheKey(url.absoluteString)
            #expect(manager.cache.metadata(for: key)?.etag == "\"v2\"", "the new image's validators are stored")
            #expect(manager.cache.storedData(for: key) == harness.jpeg, "and its bytes")
        }
    }
}
