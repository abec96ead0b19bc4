import CoreMetrics
import Synchronization
import WebImage

/// The server's own metrics, beside the library's (which go to the same factory through
/// ``Telemetry``): requests by status, fetch and processing durations, result-cache hits and
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
    let bytesIn: Counter
    let bytesOut: Counter
    let running: Gauge
    let queued: Gauge
    private let requestCounters = Mutex<[Int: Counter]>([:])

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
        bytesIn = Counter(label: "webimage_server_source_bytes_total", factory: factory)
        bytesOut = Counter(label: "webimage_server_response_bytes_total", factory: factory)
        running = Gauge(label: "webimage_server_requests_running", factory: factory)
        queued = Gauge(label: "webimage_server_requests_queued", factory: factory)
    }

    /// Counts one answered request by its status.
    func countRequest(status: Int) {
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
