import Benchmark
import Foundation
import Synchronization
import WebImage

private let entryCount = 10_000
private let urls: [URL] = (0..<entryCount).map { URL(string: "https://images.example.com/photos/\($0)/large.jpg")! }
private let keys: [CacheKey] = urls.map { CacheKey($0.absoluteString) }
/// A fixed pseudo-random visiting order, so every run reads the same keys.
private let order: [Int] = {
    var state: UInt64 = 0x5EED
    return (0..<entryCount).map { _ in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int(state >> 33) % entryCount
    }
}()

/// 10,000 small images in memory, behind a manager whose loader must never be reached.
private let cache: ImageCache = {
    let cache = ImageCache(disk: nil)
    for (index, key) in keys.enumerated() {
        let pixels = PixelBuffer(width: 1, height: 1, premultipliedRGBA: [UInt8(truncatingIfNeeded: index), 2, 3, 255])
        cache.memory.insert(Image(pixels: pixels), for: key, cost: 1000)
    }
    return cache
}()

/// Counts loads and finishes them only when cancelled: what starting a miss costs, without the
/// network.
private final class NeverLoader: ImageLoader {
    let started = Atomic(0)
    func canLoad(_ url: URL) -> Bool { true }
    func loadData(_ url: URL, options: LoadRequestOptions, events: @escaping @Sendable (LoadEvent) -> Void)
        async throws(WebImageError) -> LoadedData
    {
        // Counted on arrival: the benchmark measures the manager's path to here.
        started.add(1, ordering: .relaxed)
        let (stream, continuation) = AsyncStream<Never>.makeStream()
        await withTaskCancellationHandler {
            for await _ in stream {}
        } onCancel: {
            continuation.finish()
        }
        throw WebImageError(.cancelled)
    }
}

/// Answers every URL at once with the same tiny PNG: the manager's own cost per request.
private struct MemoryLoader: ImageLoader {
    static let png = try! CodersManager.shared.encode(
        Image(pixels: PixelBuffer(width: 2, height: 2, premultipliedRGBA: [UInt8](repeating: 128, count: 16))), as: .png)
    func canLoad(_ url: URL) -> Bool { true }
    func loadData(_ url: URL, options: LoadRequestOptions, events: @escaping @Sendable (LoadEvent) -> Void)
        async throws(WebImageError) -> LoadedData
    {
        LoadedData(data: Self.png, url: url)
    }
}

private let nothingStored: LoadContext = {
    var context = LoadContext()
    context.storeCacheType = ImageCacheType.none
    return context
}()

private let hitManager = ImageManager(cache: cache, loader: NeverLoader())

/// 1,000 entries of the tiny PNG on disk (no memory tier kept), behind a manager whose loader
/// must never be reached: each load reads the bytes and decodes them.
private let diskEntries = 1000
private let diskURLs: [URL] = (0..<diskEntries).map { URL(string: "https://disk.example.com/\($0).png")! }
private let diskManager: ImageManager = {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-disk-\(getpid())")
    let disk = try! DiskCache(directory: directory)
    for url in diskURLs { try! disk.store(MemoryLoader.png, for: url.absoluteString) }
    return ImageManager(cache: ImageCache(disk: disk), loader: NeverLoader())
}()

/// The disk tier alone, and nothing stored after: every load is a disk hit.
private let diskOnly: LoadContext = {
    var context = LoadContext()
    context.queryCacheType = .disk
    context.storeCacheType = ImageCacheType.none
    return context
}()

/// `count` distinct URLs loaded at once through the async API, nothing cached or stored.
private func concurrentLoads(_ count: Int, round: Int) async {
    let manager = ImageManager(cache: ImageCache(disk: nil), loader: MemoryLoader())
    let context = nothingStored
    let loaded = await withTaskGroup(of: Bool.self) { group in
        for index in 0..<count {
            group.addTask { (try? await manager.image(for: URL(string: "mem://\(round)/\(index)"), context: context)) != nil }
        }
        return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
    }
    precondition(loaded == count)
}

/// The same `count` child tasks decoding the same PNG with no manager: what the task group, the
/// tasks and the decode cost by themselves, to set the manager's figures against.
private func concurrentDecodes(_ count: Int) async {
    let decoded = await withTaskGroup(of: Bool.self) { group in
        for _ in 0..<count {
            group.addTask { (try? CodersManager.shared.decode(MemoryLoader.png)) != nil }
        }
        return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
    }
    precondition(decoded == count)
}

let benchmarks: @Sendable () -> Void = {
    let lookups = Benchmark.Configuration(metrics: [.wallClock, .mallocCountTotal], timeUnits: .microseconds, maxDuration: .seconds(5))

    // Each iteration makes 100,000 lookups: µs per iteration / 100 = ns per lookup.
    // `memoryImage(for:)` is the MemoryCache lookup specialised inside the library, as the
    // manager makes it; calling the generic `MemoryCache.value(for:)` from here would be slower.
    Benchmark("Manager hit baseline: bare MemoryCache lookup with a prepared key (100,000)", configuration: lookups) { benchmark in
        for _ in benchmark.scaledIterations {
            var hits = 0
            for _ in 0..<10 { for index in order where cache.memoryImage(for: keys[index]) != nil { hits += 1 } }
            precondition(hits == 10 * entryCount)
        }
    }

    Benchmark("Manager hit through loadImage (callback), from a URL (100,000)", configuration: lookups) { benchmark in
        for _ in benchmark.scaledIterations {
            let hits = Atomic(0)
            for _ in 0..<10 {
                for index in order {
                    let operation = hitManager.loadImage(with: urls[index]) { result in
                        if case .success = result { hits.add(1, ordering: .relaxed) }
                    }
                    precondition(operation == nil)
                }
            }
            precondition(hits.load(ordering: .relaxed) == 10 * entryCount)
        }
    }

    Benchmark("Manager hit through image(for:) (async), from a URL (100,000)", configuration: lookups) { benchmark in
        for _ in benchmark.scaledIterations {
            var hits = 0
            for _ in 0..<10 {
                for index in order where (try? await hitManager.image(for: urls[index]))?.cacheType == .memory { hits += 1 }
            }
            precondition(hits == 10 * entryCount)
        }
    }

    // 1,000 disk hits per iteration, one after another: µs per iteration / 1,000 = µs per hit.
    Benchmark("Manager disk hit: 1,000 image(for:) read from the disk tier and decoded, one at a time", configuration: lookups) {
        benchmark in
        for _ in benchmark.scaledIterations {
            var hits = 0
            for url in diskURLs where (try? await diskManager.image(for: url, context: diskOnly))?.cacheType == .disk { hits += 1 }
            precondition(hits == diskEntries)
        }
    }

    // 1,000 misses per iteration: µs per iteration / 1,000 = µs per miss, until the loader has it.
    Benchmark("Manager miss start: 1,000 distinct URLs until a never-finishing loader has each", configuration: lookups) { benchmark in
        for round in benchmark.scaledIterations {
            let loader = NeverLoader()
            let manager = ImageManager(cache: ImageCache(disk: nil), loader: loader)
            benchmark.startMeasurement()
            for index in 0..<1000 { _ = manager.loadImage(with: URL(string: "https://miss.example.com/\(round)/\(index).png")) { _ in } }
            while loader.started.load(ordering: .relaxed) < 1000 { await Task.yield() }
            benchmark.stopMeasurement()
            manager.cancelAll()
        }
    }

    for count in [500, 5_000] {
        Benchmark("Manager \(count) concurrent image(for:) against an in-memory loader", configuration: lookups) { benchmark in
            for round in benchmark.scaledIterations { await concurrentLoads(count, round: round) }
        }
        Benchmark("Manager baseline: \(count) child tasks decoding the same PNG, no manager", configuration: lookups) { benchmark in
            for _ in benchmark.scaledIterations { await concurrentDecodes(count) }
        }
    }
}
