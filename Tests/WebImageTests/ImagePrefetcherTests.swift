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

    /// PNGs at `prefix`0.png, `prefix`1.png... whose responses start 5 ms late, so that loads overlap.
    private static func serveSlowly(_ harness: ManagerHarness, count: Int, prefix: String) {
        for index in 0..<count {
            harness.origin.route(
                "\(prefix)\(index).png",
                OriginResponse(headers: [("Content-Type", "image/png")], body: [UInt8](harness.png), headerDelay: .milliseconds(5)))
        }
    }

    /// A prefetcher of `limit` slots over a manager whose loader counts the most loads at once.
    private static func countedPrefetcher(_ harness: ManagerHarness, limit: Int) throws -> (ConcurrencyCountingLoader, ImagePrefetcher) {
        let loader = ConcurrencyCountingLoader(harness.downloader)
        let prefetcher = ImagePrefetcher(manager: ImageManager(cache: try harness.makeCache(), loader: loader, coders: harness.coders))
        prefetcher.maxConcurrentPrefetchCount = limit
        return (loader, prefetcher)
    }

    /// A prefetcher of `limit` slots over an origin where `/never.png` never answers and `/ok.png` does.
    private static func stallingPrefetcher(_ harness: ManagerHarness, limit: Int) throws -> ImagePrefetcher {
        harness.origin.route("/never.png", OriginResponse(body: [], delivery: .neverRespond))
        harness.servePNG("/ok.png")
        let prefetcher = ImagePrefetcher(manager: try harness.makeManager())
        prefetcher.maxConcurrentPrefetchCount = limit
        return prefetcher
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
            Self.serveSlowly(harness, count: 9, prefix: "/p")
            harness.origin.route("/missing.png", .status(404))
            let (loader, prefetcher) = try Self.countedPrefetcher(harness, limit: 2)
            let manager = prefetcher.manager
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
            let prefetcher = try Self.stallingPrefetcher(harness, limit: 2)
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

    /// The entries of a run, as an application's async source would hand them over.
    private static func sequence(_ urls: [URL]) -> AsyncStream<URL> {
        AsyncStream { continuation in
            for url in urls { continuation.yield(url) }
            continuation.finish()
        }
    }

    @Test("a run works through an async sequence in the prefetcher's slots, shared with a batch; nil skips an entry")
    func run() async throws {
        try await ManagerHarness.run { harness in
            Self.serveSlowly(harness, count: 8, prefix: "/r")
            let (loader, prefetcher) = try Self.countedPrefetcher(harness, limit: 2)
            let manager = prefetcher.manager
            let batchDone = EventLog<Int>()
            prefetcher.prefetch((0..<4).map { harness.origin.url("/r\($0).png") }, completed: { finished, _ in batchDone.record(finished) })
            let asked = Locked<[URL]>([])
            let loaded = Locked<[ImageCacheType]>([])
            try await prefetcher.prefetch(Self.sequence((4..<8).map { harness.origin.url("/r\($0).png") })) { url in
                asked.withLock { $0.append(url) }
                guard !url.path.hasSuffix("r5.png") else { return nil }
                return {
                    let result = try await manager.image(for: url, options: .lowPriority)
                    loaded.withLock { $0.append(result.cacheType) }
                }
            }
            #expect(asked.withLock { $0 } == (4..<8).map { harness.origin.url("/r\($0).png") }, "each entry asked for once, in order")
            #expect(loaded.withLock { $0 } == [.none, .none, .none], "the skipped entry was never loaded")
            #expect(harness.origin.requests(to: "/r5.png").isEmpty)
            #expect(try await batchDone.waitFor { _ in true } == 4)
            #expect(loader.most.load(ordering: .relaxed) == 2, "the batch and the run shared two slots")
        }
    }

    @Test("cancelling a run's task, or cancelPrefetching, ends it with CancellationError and gives its slots back")
    func runCancellation() async throws {
        try await ManagerHarness.run { harness in
            let prefetcher = try Self.stallingPrefetcher(harness, limit: 1)
            let manager = prefetcher.manager
            let urls = (0..<3).map { harness.origin.url("/never.png?\($0)") }
            let cancelledLoads = EventLog<Bool>()
            let work: @Sendable (URL) -> (@Sendable () async throws -> Void)? = { url in
                {
                    do {
                        _ = try await manager.image(for: url)
                    } catch is CancellationError {
                        cancelledLoads.record(true)
                        throw CancellationError()
                    }
                }
            }
            let byTask = Task { try await prefetcher.prefetch(Self.sequence(urls), making: work) }
            _ = try await harness.origin.waitForRequests(1, to: "/never.png")
            byTask.cancel()
            await #expect(throws: CancellationError.self) { try await byTask.value }
            _ = try await cancelledLoads.waitFor { $0 }

            let byPrefetcher = Task { try await prefetcher.prefetch(Self.sequence(urls), making: work) }
            _ = try await harness.origin.waitForRequests(2, to: "/never.png")
            prefetcher.cancelPrefetching()
            await #expect(throws: CancellationError.self) { try await byPrefetcher.value }
            #expect(cancelledLoads.events.count == 2, "the running load was cancelled")

            let okDone = EventLog<Int>()
            prefetcher.prefetch([harness.origin.url("/ok.png")], completed: { finished, _ in okDone.record(finished) })
            #expect(try await okDone.waitFor { _ in true } == 1, "the runs' slots were given back")
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
