import CoreMetrics

/// The swift-metrics instruments of an ``ImageDownloader``.
struct DownloaderInstruments: Sendable {
    private let outcomes: [String: Counter]
    private let bytes: Counter
    private let duration: CoreMetrics.Timer
    private let queued: CoreMetrics.Timer
    private let firstByte: CoreMetrics.Timer

    init(_ telemetry: Telemetry) {
        outcomes = Dictionary(
            uniqueKeysWithValues: ["success", "failure", "cancelled", "not_modified"].map {
                ($0, telemetry.counter(.downloads, dimensions: [("result", $0)]))
            })
        bytes = telemetry.counter(.downloadBytes)
        duration = telemetry.timer(.downloadDuration)
        queued = telemetry.timer(.downloadQueueTime)
        firstByte = telemetry.timer(.downloadFirstByte)
    }

    func record(_ result: Result<LoadedData, WebImageError>, metrics: DownloadMetrics) {
        let outcome: String
        switch result {
        case .success: outcome = "success"
        case .failure(let error) where error.code == .cancelled: outcome = "cancelled"
        case .failure(let error) where error.code == .notModified: outcome = "not_modified"
        case .failure: outcome = "failure"
        }
        outcomes[outcome]?.increment()
        bytes.increment(by: Int64(metrics.bytes))
        duration.recordNanoseconds(Self.nanoseconds(metrics.totalTime))
        queued.recordNanoseconds(Self.nanoseconds(metrics.queuedTime))
        if let ttfb = metrics.timeToFirstByte { firstByte.recordNanoseconds(Self.nanoseconds(ttfb)) }
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        Int64(clamping: MonotonicClock.nanoseconds(duration))
    }
}
