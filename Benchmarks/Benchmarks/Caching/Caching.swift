import Benchmark
import Dispatch
import Foundation
import WebImage

private let entryCount = 10_000
private let keys: [CacheKey] = (0..<entryCount).map { CacheKey("https://images.example.com/photos/\($0)/large.jpg") }
/// A fixed pseudo-random visiting order, so every run reads the same keys.
private let order: [Int] = {
    var state: UInt64 = 0x5EED
    return (0..<entryCount).map { _ in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int(state >> 33) % entryCount
    }
}()

/// 10,000 distinct small images in the shared-configuration memory cache of an `ImageCache`,
/// the way the manager reads them (`MemoryCache<Image>` specialised inside the library).
private let imageCache: ImageCache = {
    let cache = ImageCache(disk: nil)
    for (index, key) in keys.enumerated() {
        let pixels = PixelBuffer(width: 1, height: 1, premultipliedRGBA: [UInt8(truncatingIfNeeded: index), 2, 3, 255])
        cache.memory.insert(Image(pixels: pixels), for: key, cost: 1000)
    }
    return cache
}()

/// Reads every key ten times in the fixed order (100,000 lookups, long enough that waking a
/// second thread costs little next to them); returns how many hit.
private func readAll(_ cache: ImageCache) -> Int {
    var hits = 0
    for _ in 0..<10 {
        for index in order where cache.memoryImage(for: keys[index]) != nil { hits += 1 }
    }
    return hits
}

private func temporaryDirectory(_ label: String) -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-\(label)-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Fills a disk cache with `entries` small entries.
private func populate(_ directory: URL, entries: Int, packed: Bool = true) throws {
    let cache = try DiskCache(
        directory: directory, configuration: DiskCacheConfiguration(sizeLimit: 0, packedEntryLimit: packed ? 64 * 1024 : 0))
    let payload = Data(repeating: 1, count: 64)
    for index in 0..<entries { try cache.store(payload, for: "https://images.example.com/photos/\(index)/large.jpg") }
    cache.close()
}

let benchmarks: @Sendable () -> Void = {
    let lookups = Benchmark.Configuration(metrics: [.wallClock, .mallocCountTotal], timeUnits: .microseconds, maxDuration: .seconds(5))

    // One iteration makes 100,000 lookups: the time in µs divided by 100 is ns per lookup.
    Benchmark("MemoryCache hit via ImageCache, 10,000 entries, one thread (100,000 lookups)", configuration: lookups) { benchmark in
        precondition(readAll(imageCache) == 10 * entryCount)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(readAll(imageCache))
        }
    }

    // Each thread makes 100,000 lookups per iteration: 200,000 in the time measured.
    Benchmark("MemoryCache hit via ImageCache, 10,000 entries, two threads (2 x 100,000 lookups)", configuration: lookups) { benchmark in
        for _ in benchmark.scaledIterations {
            DispatchQueue.concurrentPerform(iterations: 2) { _ in blackHole(readAll(imageCache)) }
        }
    }

    let disk = Benchmark.Configuration(metrics: [.wallClock, .throughput], maxDuration: .seconds(5))

    Benchmark("DiskCache warm read of a 256 KB entry", configuration: disk) { benchmark in
        let directory = temporaryDirectory("read")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try DiskCache(directory: directory)
        try cache.store(Data(repeating: 7, count: 256 * 1024), for: "https://x.com/a.jpg")
        let warm = try cache.data(for: "https://x.com/a.jpg")
        precondition(warm?.count == 256 * 1024)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try cache.data(for: "https://x.com/a.jpg"))
        }
        benchmark.stopMeasurement()
        cache.close()
    }

    Benchmark(
        "DiskCache 1,000 writes of 256 KB, 64 MiB limit checked after every write",
        configuration: .init(metrics: [.wallClock], maxDuration: .seconds(20), maxIterations: 5)
    ) { benchmark in
        let directory = temporaryDirectory("write")
        defer { try? FileManager.default.removeItem(at: directory) }
        let limit = 64 * 1024 * 1024
        let cache = try DiskCache(directory: directory, configuration: DiskCacheConfiguration(sizeLimit: limit))
        let payload = Data(repeating: 3, count: 256 * 1024)
        benchmark.startMeasurement()
        for index in 0..<1000 {
            try cache.store(payload, for: "https://x.com/\(index).jpg")
            precondition(cache.diskUsage <= limit, "the size limit must hold after every write")
        }
        benchmark.stopMeasurement()
        cache.close()
    }

    for entries in [1_000, 100_000] {
        for packed in [true, false] {
            let directory = temporaryDirectory("open-\(entries)-\(packed)")
            Benchmark(
                "DiskCache open with \(entries) entries\(packed ? "" : ", a file each")",
                configuration: .init(metrics: [.wallClock], maxDuration: .seconds(10), maxIterations: 20)
            ) { benchmark in
                for _ in benchmark.scaledIterations {
                    let cache = try DiskCache(directory: directory, configuration: DiskCacheConfiguration(sizeLimit: 0))
                    precondition(cache.count == entries)
                    cache.close()
                }
            } setup: {
                try populate(directory, entries: entries, packed: packed)
            } teardown: {
                try? FileManager.default.removeItem(at: directory)
            }
        }

        // Each store evicts: the cost of an eviction must not grow with the entry count.
        let fullDirectory = temporaryDirectory("evict-\(entries)")
        Benchmark(
            "DiskCache store with eviction, \(entries) entries at the count limit",
            configuration: .init(metrics: [.wallClock], maxDuration: .seconds(10))
        ) { benchmark in
            let cache = try DiskCache(
                directory: fullDirectory, configuration: DiskCacheConfiguration(sizeLimit: 0, countLimit: entries, lowWaterFraction: 1))
            let payload = Data(repeating: 2, count: 64)
            var next = entries
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                try cache.store(payload, for: "https://images.example.com/photos/\(next)/large.jpg")
                next += 1
            }
            benchmark.stopMeasurement()
            precondition(cache.count == entries)
            cache.close()
        } setup: {
            try populate(fullDirectory, entries: entries)
        } teardown: {
            try? FileManager.default.removeItem(at: fullDirectory)
        }
    }
}
