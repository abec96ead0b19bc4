import Foundation
import Synchronization
import Testing
import WebImage
import WebImageTesting
import WebImageTestSupport

@Suite("ImagePrefetcher")
struct ImagePrefetcherTests {
    final class Recorder: ImagePrefetcherDelegate {
        let urls = Locked<[URL]>([])
        let batches = EventLog<(total: Int, skipped: Int)>()
        func imagePrefetcher(
            _ prefetcher: ImagePrefetcher, didPrefetch url: URL, result: Result<ImageResult, WebImageError>?, finishedCount: Int,
            totalCount: Int
        ) {
            urls.withLock { $0.append(url) }
        }
        func imagePrefetcher(_ prefetcher: ImagePrefetcher, didFinishWithTotalCount totalCount: Int, skippedCount: Int) {
            batches.record((totalCount, skippedCount))
        }
    }

    @Test("defaults: 3 at once, low priority; an empty list completes at once with (0, 0)")
    func defaults() async throws {
        try await ManagerHarness.run { harness in
            let prefetcher = ImagePrefetcher(manager: try harness.makeManager())
            #expect(prefetcher.maxConcurrentPrefetchCount == 3 && prefetcher.options == .lowPriority)
            let counts = Locked<(Int, Int)?>(nil)
            prefetcher.prefetch([], completed: { finished, skipped in counts.withLock { $0 = (finished, skipped) } })
            #expect(counts.withLock { $0 } ?? (-1, -1) == (0, 0))
        }
    }

    @Test("a batch loads every URL into the cache, never more than the limit at once, counting failures as skipped")
    func batch() async throws {
        try await ManagerHarness.run { harness in
            for index in 0..<9 {
                harness.origin.route(
                    "/p\(index).png",
                    OriginResponse(headers: [("Content-Type", "image/png")], body: [UInt8](harness.png), headerDelay: .milliseconds(5)))
            }
            harness.origin.route("/missing.png", .status(404))
            let loader = ConcurrencyCountingLoader(harness.downloader)
            let manager = ImageManager(cache: try harness.makeCache(), loader: loader, coders: harness.coders)
            let prefetcher = ImagePrefetcher(manager: manager)
            prefetcher.maxConcurrentPrefetchCount = 2
            let recorder = Recorder()
            prefetcher.delegate = recorder
            let urls = (0..<9).map { harness.origin.url("/p\($0).png") } + [harness.origin.url("/missing.png")]
            let progress = Locked<[Int]>([])
            let done = EventLog<(Int, Int)>()
            prefetcher.prefetch(
                urls,
                progress: { finished, total in
                    #expect(total == 10)
                    progress.withLock { $0.append(finished) }
                }, completed: { done.record(($0, $1)) })
            let (finished, skipped) = try await done.waitFor { _ in true }
            #expect(finished == 10 && skipped == 1)
            #expect(progress.withLock { $0 } == Array(1...10))
            #expect(Set(recorder.urls.withLock { $0 }) == Set(urls))
            let batch = try await recorder.batches.waitFor { _ in true }
            #expect(batch.total == 9 && batch.skipped == 1)
            for index in 0..<9 {
                #expect(try await manager.image(for: harness.origin.url("/p\(index).png"), options: .fromCacheOnly).cacheType == .memory)
            }
            #expect(loader.most.load(ordering: .relaxed) == 2)
        }
    }

    @Test("cancelling one batch stops it alone; cancelPrefetching stops all")
    func cancellation() async throws {
        try await ManagerHarness.run { harness in
            harness.origin.route("/never.png", OriginResponse(body: [], delivery: .neverRespond))
            harness.servePNG("/ok.png")
            let prefetcher = ImagePrefetcher(manager: try harness.makeManager())
            prefetcher.maxConcurrentPrefetchCount = 2
            let stuckDone = EventLog<Int>()
            let stuck = prefetcher.prefetch(
                (0..<5).map { harness.origin.url("/never.png?\($0)") }, completed: { finished, _ in stuckDone.record(finished) })
            _ = try await harness.origin.waitForRequests(2, to: "/never.png")
            stuck.cancel()
            #expect(stuck.isCancelled)
            let okDone = EventLog<Int>()
            prefetcher.prefetch([harness.origin.url("/ok.png")], completed: { finished, _ in okDone.record(finished) })
            #expect(try await okDone.waitFor { _ in true } == 1, "the slots of the cancelled batch were given back")
            #expect(stuckDone.events.isEmpty)

            let second = prefetcher.prefetch((0..<3).map { harness.origin.url("/never.png?again\($0)") })
            prefetcher.cancelPrefetching()
            #expect(second.isCancelled)
        }
    }
}

/// Passes loads to the real downloader, keeping the most it had running at once.
final class ConcurrencyCountingLoader: ImageLoader {
    let inner: any ImageLoader
    let running = Atomic(0)
    let most = Atomic(0)

    init(_ inner: any ImageLoader) {
        self.inner = inner
    }

    func canLoad(_ url: URL) -> Bool { inner.canLoad(url) }

    func loadData(_ url: URL, options: LoadRequestOptions, events: @escaping @Sendable (LoadEvent) -> Void)
        async throws(WebImageError) -> LoadedData
    {
        let now = running.add(1, ordering: .relaxed).newValue
        most.max(now, ordering: .relaxed)
        defer { running.subtract(1, ordering: .relaxed) }
        return try await inner.loadData(url, options: options, events: events)
    }
}
