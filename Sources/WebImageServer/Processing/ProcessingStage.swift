import Crypto
import Foundation
import Tracing
import WebImage

/// The processing stage: a fetched source checked against the URL's own limits, then processed
/// (or described, for `/info`) in the shared work pool within a slot of the admission gate and
/// the processing timeout, as a span when traced.
final class ProcessingStage: Sendable {
    let processor: ImageProcessor
    let gate: AdmissionGate
    private let timeout: Duration
    private let metrics: ServerMetrics
    private let tracer: (any Tracer)?

    init(configuration: ImageServerConfiguration, telemetry: Telemetry, metrics: ServerMetrics) {
        processor = ImageProcessor(
            coders: CodersManager.shared, maximumSourcePixels: Int(configuration.maximumSourceMegapixels * 1_000_000),
            maximumAnimationFrames: configuration.maximumAnimationFrames,
            maximumAnimationFramePixels: Int(configuration.maximumAnimationFrameMegapixels * 1_000_000),
            defaultQuality: configuration.defaultQuality,
            resultLimits: ProcessingPlan.Limits(
                maximumDimension: configuration.maximumResultDimension,
                maximumPixels: Int(configuration.maximumResultMegapixels * 1_000_000)),
            formatQuality: configuration.formatQuality, encoderSettings: configuration.encoding,
            videoThumbnails: configuration.enableVideoThumbnails ? Self.videoDecoding(configuration) : nil)
        gate = AdmissionGate(concurrency: configuration.concurrency, queueLength: configuration.queueLength)
        timeout = configuration.processingTimeout
        self.metrics = metrics
        tracer = telemetry.activeTracer
    }

    /// How a video source is decoded: the configuration's frame and bounds, within the
    /// processing timeout (FFmpeg is interrupted there, where another decode stops at its next step).
    private static func videoDecoding(_ configuration: ImageServerConfiguration) -> VideoFrameSelection {
        var selection = configuration.videoThumbnails
        selection.timeLimit = min(selection.timeLimit, configuration.processingTimeout)
        return selection
    }

    /// `data` processed by `options` into the format `choice` picks, with `watermark` laid when
    /// the options lay one. The span covers the wait for a slot too; its decode, transforms and
    /// encode are beneath it.
    func render(_ data: Data, options: ProcessingOptions, choice: OutputFormatRule, watermark: ImageProcessor.Watermark?)
        async throws(ProxyError) -> (data: Data, format: ImageFormat, seconds: Double)
    {
        let processor = self.processor
        let start = ContinuousClock.now
        let result = try await withStageSpan("process", tracer: tracer) { () async throws(ProxyError) in
            let spans = StageSpans(tracer: tracer)
            return try await inWorkPool { isCancelled throws(ProxyError) in
                try processor.process(data, options: options, rule: choice, watermark: watermark, spans: spans, isCancelled: isCancelled)
            }
        }
        let seconds = ContinuousClock.now.seconds(since: start)
        metrics.processingDuration.recordSeconds(seconds)
        metrics.running.record(gate.running)
        metrics.queued.record(gate.queued)
        return (result.data, result.format, seconds)
    }

    /// `/info`'s JSON for `data`.
    func describe(_ data: Data, options: InfoOptions) async throws(ProxyError) -> String {
        let describer = ImageInfo(options: options, maximumSourcePixels: processor.maximumSourcePixels, coders: processor.coders)
        return try await withStageSpan("process", tracer: tracer) { () async throws(ProxyError) in
            try await inWorkPool { _ throws(ProxyError) in try describer.json(for: data) }
        }
    }

    private func inWorkPool<T: Sendable>(_ work: @escaping @Sendable (_ isCancelled: @Sendable () -> Bool) throws(ProxyError) -> T)
        async throws(ProxyError) -> T
    {
        try await gate.run(
            in: WorkPool.shared, limit: timeout, timeout: ProxyError(status: 504, "processing took longer than \(timeout)"), work)
    }

    /// Refuses a source over the URL's own `max_src_file_size` (413, as a source over the server's
    /// byte cap); 0 is no limit of its own.
    static func checkSourceBytes(_ data: Data, security: ProcessingOptions.SecurityLimits) throws(ProxyError) {
        if let limit = security.sourceBytes, limit > 0, data.count > limit {
            throw .tooLarge("the source is over the byte limit: \(data.count) bytes, over the URL's \(limit) (max_src_file_size)")
        }
    }

    /// Refuses a source whose digest is not the URL's `hashsum` (imgproxy's 422).
    static func checkHashsum(_ data: Data, options: ProcessingOptions) throws(ProxyError) {
        guard let hashsum = options.hashsum else { return }
        let digest: [UInt8]
        switch hashsum.kind {
        case .md5: digest = Array(Insecure.MD5.hash(data: data))
        case .sha1: digest = Array(Insecure.SHA1.hash(data: data))
        case .sha256: digest = Array(SHA256.hash(data: data))
        case .sha512: digest = Array(SHA512.hash(data: data))
        }
        guard digest.map({ String(format: "%02x", $0) }).joined() == hashsum.digest else {
            throw .unprocessable("the source's \(hashsum.kind.rawValue) is not the URL's (hashsum)")
        }
    }
}
