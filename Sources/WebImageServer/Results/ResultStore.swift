import Foundation
import Logging
import Tracing
import WebImage

/// The results this node keeps and the fleet shares: the memory tier in front of the disk tier,
/// the bucket behind both, and the paths already resolved to a result key.
final class ResultStore: Sendable {
    /// The results on disk.
    let disk: DiskCache
    /// The results served most recently, in front of the disk: a hit costs no file read. Nil
    /// when configured to keep none.
    private let memory: MemoryCache<ProcessedResult>?
    /// Paths already answered, by their raw text: a repeated path skips parsing, the signature
    /// check and the options, which were most of a memory hit's own work. Kept with the memory
    /// tier, in an eighth of its size.
    private let resolvedPaths: MemoryCache<ResolvedPath>?
    /// The results the fleet shares, when configured.
    private let bucket: ResultBucket?
    /// Result-bucket lookups under way: a cold node's concurrent first requests for one result
    /// make one GET.
    private let bucketLookups = InFlight<ProcessedResult?>()
    private let metrics: ServerMetrics
    private let logger: Logger
    private let tracer: (any Tracer)?

    /// What a valid path resolved to. Only paths whose answer does not depend on the request's
    /// headers (no `Vary`) or on the time (no `expires`) are kept.
    struct ResolvedPath: Sendable {
        var key: String
        var options: ProcessingOptions
    }

    init(configuration: ImageServerConfiguration, telemetry: Telemetry, metrics: ServerMetrics) throws(WebImageError) {
        disk = try DiskCache(
            directory: configuration.resolvedCacheDirectory.appendingPathComponent("results"),
            configuration: DiskCacheConfiguration(sizeLimit: configuration.resultCacheBytes), telemetry: telemetry)
        try Self.requireWritable(disk)
        bucket = configuration.resultBucket.map { settings in
            // A lookup comes before every miss's work: a bucket that hangs may hold a request
            // no longer than a source download may, and is not tried again.
            var settings = settings
            settings.client.timeout = min(settings.client.timeout, configuration.downloadTimeout)
            settings.client.maximumAttempts = 1
            return ResultBucket(settings: settings, metrics: metrics, logger: telemetry.logger("server"))
        }
        // A memory cache's cost limit of 0 means unlimited; the server's 0 means none.
        let memoryBytes = configuration.resultMemoryCacheBytes
        memory = memoryBytes > 0 ? MemoryCache(configuration: MemoryCacheConfiguration(costLimit: memoryBytes), telemetry: telemetry) : nil
        resolvedPaths =
            memoryBytes > 0
            ? MemoryCache(configuration: MemoryCacheConfiguration(costLimit: max(memoryBytes / 8, 1)), telemetry: telemetry) : nil
        self.metrics = metrics
        logger = telemetry.logger("server")
        tracer = telemetry.activeTracer
    }

    /// Refuses a cache directory this process cannot write. A second node opening a directory
    /// another process holds would get a read-only cache (the disk cache's lock) and silently
    /// process every miss again without storing it; nodes on one host each keep their own
    /// directory (docs/deploy.md), so saying so at start-up is the useful answer.
    private static func requireWritable(_ results: DiskCache) throws(WebImageError) {
        guard results.isReadOnly else { return }
        results.close()
        throw WebImageError(
            .cacheIO,
            "the cache directory \(results.directory.deletingLastPathComponent().path) is in use by another process or not writable: "
                + "give each server its own --result-cache-dir")
    }

    /// Requests waiting for a result-bucket lookup.
    var bucketLookupWaiterCount: Int { bucketLookups.waiterCount }

    /// What `path` resolved to when it was last answered, if it is remembered.
    func resolved(_ path: CacheKey) -> ResolvedPath? {
        resolvedPaths?.value(for: path)
    }

    /// Remembers what `path` resolved to, unless its answer depends on the request's headers or
    /// on the time.
    func remember(_ request: ProxyRequest, resolving path: CacheKey) {
        guard request.vary.isEmpty, request.options.expires == nil else { return }
        let cost = path.original.utf8.count + request.key.utf8.count + 256
        _ = resolvedPaths?.insert(ResolvedPath(key: request.key, options: request.options), for: path, cost: cost)
    }

    /// The result this node has for `key`, from memory or disk (kept in memory then), as a span
    /// when traced.
    func local(_ key: String) -> ProcessedResult? {
        StageSpans(tracer: tracer).measure("result cache") { cachedResult(for: key) }
    }

    private func cachedResult(for key: String) -> ProcessedResult? {
        if var recent = memory?.value(for: CacheKey(key)) {
            metrics.resultMemoryHits.increment()
            recent.tier = .memory
            return recent
        }
        guard let metadata = disk.metadata(for: key), let contentType = metadata.contentType,
            let data = try? disk.data(for: key)
        else { return nil }
        let result = ProcessedResult(
            data: data, contentType: contentType, etag: metadata.etag, lastModified: metadata.lastModified,
            debug: DebugFacts(stored: metadata.extendedData), tier: .disk)
        _ = memory?.insert(result.stored, for: CacheKey(key), cost: result.data.count)
        metrics.resultHits.increment()
        return result
    }

    /// The result the bucket keeps for `key`, looked up once however many requests want it at
    /// once, and kept on this node too, so that the next request for it stays local. Nil
    /// without a bucket.
    func shared(_ key: String) async throws(ProxyError) -> ProcessedResult? {
        guard let bucket else { return nil }
        return try await bucketLookups.run(key) { () async throws(ProxyError) -> ProcessedResult? in
            guard let hit = try await bucket.result(for: key) else { return nil }
            self.keepLocally(hit, for: key)
            return hit
        }
    }

    /// Keeps a result made here on this node and in the bucket.
    func keep(_ result: ProcessedResult, for key: String) {
        keepLocally(result, for: key)
        bucket?.store(result, for: key)
    }

    /// Writes a result to the disk tier (with its validators and debug facts beside it, as a
    /// span when traced) and keeps it in memory; a failed write is logged, not answered.
    func keepLocally(_ result: ProcessedResult, for key: String) {
        _ = memory?.insert(result.stored, for: CacheKey(key), cost: result.data.count)
        var metadata = DiskCacheMetadata(contentType: result.contentType, etag: result.etag, lastModified: result.lastModified)
        metadata.extendedData = result.debug?.stored
        do {
            try StageSpans(tracer: tracer).measure("store") { () throws(WebImageError) in
                try disk.store(result.data, for: key, metadata: metadata)
            }
        } catch {
            logger.warning("the result cache could not store a result", metadata: ["error": "\(error)"])
        }
    }

    /// Waits for the bucket's writes, flushes and closes the disk tier.
    func shutdown() async {
        await bucket?.shutdown()
        try? disk.flush()
        disk.close()
    }
}
