import Foundation
import MetricsTestKit
import Testing
@testable import WebImage
@testable import WebImageCaching
import WebImageTestSupport

@Suite("MemoryCache")
struct MemoryCacheTests {
    private func key(_ name: String) -> CacheKey { CacheKey("https://example.com/\(name).png") }

    private func singleShard(costLimit: Int = 0, countLimit: Int = 0, fraction: Double = 1, ttl: Duration? = nil) -> MemoryCache<String> {
        MemoryCache(
            configuration: MemoryCacheConfiguration(
                costLimit: costLimit, countLimit: countLimit, timeToLive: ttl, maximumEntryFraction: fraction, maximumShardCount: 1
            ))
    }

    @Test("stores, finds and removes")
    func basics() {
        let cache = singleShard(costLimit: 100)
        #expect(cache.value(for: key("a")) == nil)
        #expect(cache.insert("A", for: key("a"), cost: 10))
        #expect(cache.value(for: key("a")) == "A")
        #expect(cache.contains(key("a")))
        #expect(cache.totalCost == 10)
        #expect(cache.count == 1)
        cache.insert("A2", for: key("a"), cost: 30)
        #expect(cache.value(for: key("a")) == "A2")
        #expect(cache.totalCost == 30)
        #expect(cache.removeValue(for: key("a")) == "A2")
        #expect(cache.count == 0)
        #expect(cache.totalCost == 0)
        #expect(cache.statistics == MemoryCacheStatistics(hits: 2, misses: 1, insertions: 2, evictions: 0, rejections: 0))
    }

    @Test("variants of one original are separate entries")
    func variants() {
        let cache = singleShard()
        let original = CacheKey("u")
        let thumbnail = CacheKey("u", thumbnail: .init(width: 10, height: 10))
        cache.insert("original", for: original, cost: 1)
        cache.insert("thumbnail", for: thumbnail, cost: 1)
        #expect(cache.value(for: original) == "original")
        #expect(cache.value(for: thumbnail) == "thumbnail")
    }

    @Test("the least recently used entry goes first, whatever its cost")
    func leastRecentlyUsed() {
        let cache = singleShard(costLimit: 10)
        cache.insert("A", for: key("a"), cost: 5)
        cache.insert("B", for: key("b"), cost: 1)
        cache.insert("C", for: key("c"), cost: 5)
        #expect(cache.value(for: key("a")) == nil, "A was least recently used")
        #expect(cache.value(for: key("b")) == "B", "cheapest-first would have dropped B")
        #expect(cache.value(for: key("c")) == "C")
        _ = cache.value(for: key("b"))
        cache.insert("D", for: key("d"), cost: 5)
        #expect(cache.value(for: key("b")) == "B", "B was used after C, so C goes")
        #expect(cache.value(for: key("c")) == nil)
        #expect(cache.totalCost == 6)
        #expect(cache.statistics.evictions == 2)
    }

    @Test("the count limit holds")
    func countLimit() {
        let cache = singleShard(countLimit: 3)
        for index in 0..<10 { cache.insert("\(index)", for: key("\(index)"), cost: 1) }
        #expect(cache.count == 3)
        #expect((7..<10).allSatisfy { cache.contains(key("\($0)")) })
    }

    @Test("an entry above the largest allowed cost is refused and replaces nothing")
    func oversizedEntry() {
        let cache = MemoryCache<String>(configuration: MemoryCacheConfiguration(costLimit: 1000, maximumShardCount: 1))
        #expect(cache.maximumEntryCost == 100)
        #expect(cache.insert("small", for: key("a"), cost: 100))
        #expect(!cache.insert("big", for: key("a"), cost: 101))
        #expect(cache.value(for: key("a")) == nil, "the stale smaller value must not be served")
        #expect(cache.statistics.rejections == 1)
    }

    @Test("entries expire after their time to live")
    func timeToLive() {
        let expiring = singleShard(ttl: .nanoseconds(1))
        expiring.insert("A", for: key("a"), cost: 1)
        #expect(expiring.value(for: key("a")) == nil)
        #expect(!expiring.contains(key("a")))
        #expect(expiring.count == 1, "still held until removeExpired")
        expiring.removeExpired()
        #expect(expiring.count == 0)

        let lasting = singleShard(ttl: .seconds(3600))
        lasting.insert("A", for: key("a"), cost: 1)
        lasting.removeExpired()
        #expect(lasting.value(for: key("a")) == "A")
    }

    @Test("trim, removeAll and memory pressure")
    func trimming() {
        let cache = singleShard(costLimit: 1000)
        for index in 0..<10 { cache.insert("\(index)", for: key("\(index)"), cost: 10) }
        cache.trim(toCost: 55)
        #expect(cache.totalCost == 50)
        #expect(cache.contains(key("9")) && !cache.contains(key("4")))
        cache.trim(toCount: 2)
        #expect(cache.count == 2)
        cache.handleMemoryPressure()
        #expect(cache.totalCost == 10)
        cache.removeAll()
        #expect(cache.count == 0 && cache.totalCost == 0)
    }

    @Test("the default limit is 20% of the smaller of memory and the cgroup limit, at most 1 GiB")
    func defaultLimit() {
        let gib = 1 << 30
        #expect(MemoryCacheConfiguration.defaultCostLimit(physicalMemory: 2 * gib, cgroupLimit: nil) == 2 * gib / 5)
        #expect(MemoryCacheConfiguration.defaultCostLimit(physicalMemory: 24 * gib, cgroupLimit: nil) == gib)
        #expect(MemoryCacheConfiguration.defaultCostLimit(physicalMemory: 24 * gib, cgroupLimit: gib) == gib / 5)
        #expect(MemoryCacheConfiguration.defaultCostLimit > 0)
    }

    @Test("the cgroup v2 limit is read from the process's group and its ancestors")
    func cgroupLimit() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("cgroup-\(UUID())")
        defer { try? FileManager.default.removeItem(at: root) }
        let group = root.appendingPathComponent("app.slice/worker")
        try FileManager.default.createDirectory(at: group, withIntermediateDirectories: true)
        let membership = root.appendingPathComponent("cgroup")
        try "0::/app.slice/worker\n".write(to: membership, atomically: true, encoding: .utf8)
        try "max\n".write(to: group.appendingPathComponent("memory.max"), atomically: true, encoding: .utf8)
        #expect(SystemMemory.cgroupMemoryLimit(procSelfCgroup: membership.path, cgroupRoot: root.path) == nil)
        try "536870912\n".write(to: root.appendingPathComponent("app.slice/memory.max"), atomically: true, encoding: .utf8)
        #expect(SystemMemory.cgroupMemoryLimit(procSelfCgroup: membership.path, cgroupRoot: root.path) == 536_870_912)
        #expect(SystemMemory.cgroupMemoryLimit(procSelfCgroup: "/nonexistent", cgroupRoot: root.path) == nil)
    }

    @Test("a small budget is shared by all shards: every entry within it is kept")
    func smallBudgetAcrossShards() {
        let tiny = MemoryCache<String>(configuration: MemoryCacheConfiguration(costLimit: 100, countLimit: 10))
        for index in 0..<10 { tiny.insert("\(index)", for: key("\(index)"), cost: 10) }
        #expect(tiny.count == 10, "one shard holds the whole budget")
    }

    @Test("evictions are reported to metrics")
    func evictionMetric() throws {
        let metrics = TestMetrics()
        let cache = MemoryCache<String>(
            configuration: MemoryCacheConfiguration(costLimit: 0, countLimit: 2, maximumShardCount: 1),
            telemetry: Telemetry(metricsFactory: metrics)
        )
        for index in 0..<5 { cache.insert("\(index)", for: key("\(index)"), cost: 1) }
        #expect(try metrics.expectCounter("webimage_memory_cache_evictions_total").totalValue == 3)
    }

    @Test("limits hold at every observation under 8 concurrent writers")
    func concurrentLimits() async {
        let costLimit = 50_000
        let countLimit = 400
        let cache = MemoryCache<[UInt8]>(configuration: MemoryCacheConfiguration(costLimit: costLimit, countLimit: countLimit))
        let observations = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var generator = SplitMix64(seed: UInt64(worker))
                    for _ in 0..<20_000 {
                        let key = CacheKey("k\(generator.next() % 2000)")
                        switch generator.next() % 3 {
                        case 0: cache.insert([UInt8](repeating: 1, count: 1), for: key, cost: Int(generator.next() % 5000))
                        case 1: _ = cache.value(for: key)
                        default: cache.removeValue(for: key)
                        }
                    }
                    return 0
                }
            }
            group.addTask {
                var violations = 0
                for _ in 0..<2000 {
                    if cache.totalCost > costLimit || cache.count > countLimit { violations += 1 }
                    await Task.yield()
                }
                return violations
            }
            return await group.reduce(0, +)
        }
        #expect(observations == 0)
        #expect(cache.totalCost <= costLimit)
        cache.removeAll()
        #expect(cache.totalCost == 0 && cache.count == 0, "the shared totals account for exactly what the shards hold")
    }
}
