/// The names under which the library reports to swift-metrics. Each is stable: dashboards and
/// alerts can rely on it. The table in `docs/metrics.md` lists them with their dimensions.
public struct MetricName: RawRepresentable, Hashable, Sendable {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Counter: entries a memory cache evicted to keep its limits.
    public static let memoryCacheEvictions = MetricName(rawValue: "webimage_memory_cache_evictions_total")
    /// Counter: entries a disk cache removed to keep its limits or because they expired.
    /// Dimension `reason`: `size`, `count`, `expired`, `invalid`.
    public static let diskCacheRemovals = MetricName(rawValue: "webimage_disk_cache_removals_total")
    /// Counter: disk cache lookups. Dimension `result`: `hit`, `miss`.
    public static let diskCacheLookups = MetricName(rawValue: "webimage_disk_cache_lookups_total")
    /// Counter: bytes a disk cache wrote.
    public static let diskCacheBytesWritten = MetricName(rawValue: "webimage_disk_cache_written_bytes_total")
    /// Counter: disk cache I/O errors that the cache survived. Dimension `operation`: `read`, `write`, `remove`, `journal`.
    public static let diskCacheErrors = MetricName(rawValue: "webimage_disk_cache_errors_total")
    /// Counter: stores an image manager made into its cache that failed (a full or read-only
    /// disk, a custom cache's error); the image was still delivered unless the load asked to
    /// wait for the store.
    public static let cacheStoreFailures = MetricName(rawValue: "webimage_cache_store_failures_total")

    /// Counter: downloaded images an image manager decoded that its decoder reported warnings
    /// for (`Image.warnings` in WebImageCodecs: damage worked around, as browsers do). Dimension `partial`:
    /// `true` when the data ended early and only part of the image was decoded
    /// (`Image.isPartial`), `false` otherwise.
    public static let decodeWarnings = MetricName(rawValue: "webimage_decode_warnings_total")

    /// Counter: downloads that ended. Dimension `result`: `success`, `failure`, `cancelled`, `not_modified`.
    public static let downloads = MetricName(rawValue: "webimage_downloads_total")
    /// Counter: body bytes downloaded.
    public static let downloadBytes = MetricName(rawValue: "webimage_download_bytes_total")
    /// Timer: from a download's start to its end, retries included.
    public static let downloadDuration = MetricName(rawValue: "webimage_download_duration")
    /// Timer: time a download waited in the queue.
    public static let downloadQueueTime = MetricName(rawValue: "webimage_download_queue_time")
    /// Timer: from a download's start to its first response head.
    public static let downloadFirstByte = MetricName(rawValue: "webimage_download_first_byte")
}
