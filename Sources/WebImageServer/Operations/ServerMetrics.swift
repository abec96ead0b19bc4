import CoreMetrics
import WebImage

/// The server's own metrics, beside the library's (which go to the same factory through
/// `Telemetry`): requests by status, fetch and processing durations, result-cache hits and
/// misses, bytes in and out, work running and waiting.
final class ServerMetrics: Sendable {
    let factory: any MetricsFactory
    let fetchDuration: CoreMetrics.Timer
    let processingDuration: CoreMetrics.Timer
    let resultHits: Counter
    let resultMemoryHits: Counter
    let resolvedPathHits: Counter
    let resultMisses: Counter
    let sourceHits: Counter
    /// Sources downloaded again that this node had downloaded before (evicted, expired, or a
    /// window in the coalescing): each is also a log line.
    let sourceRefetches: Counter
    /// The bucket the fleet shares: lookups (hit, miss, error) and background writes (stored,
    /// error, dropped for want of a slot).
    let resultBucketHits, resultBucketMisses, resultBucketErrors: Counter
    let resultBucketStored, resultBucketWriteErrors, resultBucketWritesDropped: Counter
    let bytesIn: Counter
    let bytesOut: Counter
    let running: Gauge
    let queued: Gauge
    let requestDuration: CoreMetrics.Timer
    /// The recent past of the same requests, for `/status`.
    let board = StatusBoard()
    private let started = ContinuousClock.now
    private let requestCounters = Locked<[Int: Counter]>([:])
    private let sourceErrorCounters = Locked<[String: Counter]>([:])

    init(factory: any MetricsFactory) {
        self.factory = factory
        fetchDuration = Timer(label: "webimage_server_fetch_duration_seconds", preferredDisplayUnit: .seconds, factory: factory)
        processingDuration = Timer(label: "webimage_server_processing_duration_seconds", preferredDisplayUnit: .seconds, factory: factory)
        resultHits = Counter(
            label: "webimage_server_cache_lookups_total", dimensions: [("tier", "result"), ("result", "hit")], factory: factory)
        resultMemoryHits = Counter(
            label: "webimage_server_cache_lookups_total", dimensions: [("tier", "result-memory"), ("result", "hit")], factory: factory)
        resolvedPathHits = Counter(
            label: "webimage_server_cache_lookups_total", dimensions: [("tier", "path"), ("result", "hit")], factory: factory)
        resultMisses = Counter(
            label: "webimage_server_cache_lookups_total", dimensions: [("tier", "result"), ("result", "miss")], factory: factory)
        sourceHits = Counter(
            label: "webimage_server_cache_lookups_total", dimensions: [("tier", "source"), ("result", "hit")], factory: factory)
        func bucketLookups(_ result: String) -> Counter {
            Counter(
                label: "webimage_server_cache_lookups_total", dimensions: [("tier", "result-bucket"), ("result", result)], factory: factory)
        }
        (resultBucketHits, resultBucketMisses, resultBucketErrors) = (bucketLookups("hit"), bucketLookups("miss"), bucketLookups("error"))
        func bucketWrites(_ result: String) -> Counter {
            Counter(label: "webimage_server_result_bucket_writes_total", dimensions: [("result", result)], factory: factory)
        }
        (resultBucketStored, resultBucketWriteErrors, resultBucketWritesDropped) = (
            bucketWrites("stored"), bucketWrites("error"), bucketWrites("dropped")
        )
        sourceRefetches = Counter(label: "webimage_server_source_refetches_total", factory: factory)
        bytesIn = Counter(label: "webimage_server_source_bytes_total", factory: factory)
        bytesOut = Counter(label: "webimage_server_response_bytes_total", factory: factory)
        running = Gauge(label: "webimage_server_requests_running", factory: factory)
        queued = Gauge(label: "webimage_server_requests_queued", factory: factory)
        requestDuration = Timer(label: "webimage_server_request_duration_seconds", preferredDisplayUnit: .seconds, factory: factory)
    }

    /// Seconds since the server started: the status board's clock.
    var secondsSinceStart: Int { Int((ContinuousClock.now - started) / .seconds(1)) }

    /// Counts one answered proxy request by its status, times it, and puts it on the board.
    func record(status: Int, seconds: Double, signedPath: Substring, bytes: Int) {
        countRequest(status: status)
        requestDuration.recordSeconds(seconds)
        board.record(status: status, milliseconds: seconds * 1000, path: signedPath, bytes: bytes, second: secondsSinceStart)
    }

    /// Counts a source that could not be fetched, by what went wrong (`http_404`, `timedOut`).
    func countSourceError(kind: String) {
        let counter = sourceErrorCounters.withLock { counters in
            if let counter = counters[kind] { return counter }
            let counter = Counter(label: "webimage_server_source_errors_total", dimensions: [("kind", kind)], factory: factory)
            counters[kind] = counter
            return counter
        }
        counter.increment()
    }

    private func countRequest(status: Int) {
        // Made once per status: the factory's lookup by label and dimensions cost 1% of a cache hit.
        let counter = requestCounters.withLock { counters in
            if let counter = counters[status] { return counter }
            let counter = Counter(label: "webimage_server_requests_total", dimensions: [("status", String(status))], factory: factory)
            counters[status] = counter
            return counter
        }
        counter.increment()
    }
}
