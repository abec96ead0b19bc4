import Crypto
import Foundation
import Logging
import WebImage
import WebImageS3

/// Processed results kept in an S3 bucket the whole fleet shares, behind each node's memory and
/// disk tiers (imgproxy Pro 4's internal cache with `IMGPROXY_CACHE_USE=s3`): a node with an
/// empty disk answers from the bucket without fetching or processing, with the bytes and
/// validators the node that made the result answered, so a 304 needs nothing either.
///
/// An object's key is the prefix and the SHA-256 of the result's cache key (source, canonical
/// options, format choice: no signature, so rotating keys keeps the bucket); the result's own
/// ETag, Last-Modified and debug facts ride in `x-amz-meta-*`. Writes go on in the background
/// and never delay an answer (at most ``maximumPendingWrites`` at once; more are dropped and
/// counted); a bucket that fails is a miss (or a write lost) with a metric and a log line, not
/// an error answer, unless ``ResultBucketSettings/reportsErrors``.
final class ResultBucket: Sendable {
    static let maximumPendingWrites = 64

    private let client: S3Client
    private let settings: ResultBucketSettings
    private let logger: Logger
    private let metrics: ServerMetrics
    /// Writes under way, to wait for at shutdown; a lock because they start from any request.
    private let pending = Locked<(next: Int, tasks: [Int: Task<Void, Never>])>((0, [:]))

    init(settings: ResultBucketSettings, metrics: ServerMetrics, logger: Logger) {
        self.settings = settings
        client = S3Client(configuration: settings.client)
        self.logger = logger
        self.metrics = metrics
    }

    /// The object a result's cache key is kept under.
    func objectKey(_ key: String) -> String {
        settings.keyPrefix + SHA256.hash(data: Data(key.utf8)).lowercaseHex
    }

    /// The stored result for `key`, or nil when the bucket has none or cannot be read.
    /// - Throws: 502 only when errors are reported (`IMGPROXY_CACHE_REPORT_ERRORS`).
    func result(for key: String) async throws(ProxyError) -> ProcessedResult? {
        let location = S3Location(bucket: settings.bucket, key: objectKey(key))
        do {
            let object = try await client.getObject(location)
            let metadata = object.info.metadata
            guard let contentType = object.info.contentType else {
                metrics.resultBucketMisses.increment()
                return nil
            }
            metrics.resultBucketHits.increment()
            return ProcessedResult(
                data: object.data, contentType: contentType, etag: metadata["etag"], lastModified: metadata["last-modified"],
                debug: DebugFacts(stored: metadata["debug"].map { Data($0.utf8) }), tier: .bucket)
        } catch  where error.code == .badStatus(404) {
            metrics.resultBucketMisses.increment()
            return nil
        } catch {
            metrics.resultBucketErrors.increment()
            logger.warning("the result bucket could not be read", metadata: ["error": "\(error)"])
            if settings.reportsErrors { throw ProxyError(status: 502, "the result bucket could not be read: \(error.code)") }
            return nil
        }
    }

    /// Stores a result in the background.
    func store(_ result: ProcessedResult, for key: String) {
        var metadata: [String: String] = [:]
        if let etag = result.etag { metadata["etag"] = etag }
        if let lastModified = result.lastModified { metadata["last-modified"] = lastModified }
        if let debug = result.debug?.stored { metadata["debug"] = String(decoding: debug, as: UTF8.self) }
        let (data, contentType) = (result.data, result.contentType)
        let location = S3Location(bucket: settings.bucket, key: objectKey(key))
        // A task of its own: the answer does not wait for the write. It is made under the lock,
        // so it is recorded before it can remove itself when done; shutdown() waits for the rest.
        let admitted = pending.withLock { state -> Bool in
            guard state.tasks.count < Self.maximumPendingWrites else { return false }
            state.next += 1
            let id = state.next
            state.tasks[id] = Task { [client, metrics, logger, pending, metadata] in
                do {
                    try await client.putObject(location, data: data, contentType: contentType, metadata: metadata)
                    metrics.resultBucketStored.increment()
                } catch {
                    metrics.resultBucketWriteErrors.increment()
                    logger.warning("the result bucket could not store a result", metadata: ["error": "\(error)"])
                }
                _ = pending.withLock { $0.tasks.removeValue(forKey: id) }
            }
            return true
        }
        if !admitted { metrics.resultBucketWritesDropped.increment() }
    }

    /// Waits for the writes under way (each removes itself as it ends), then ends the client.
    func shutdown() async {
        while let task = pending.withLock({ $0.tasks.values.first }) { await task.value }
        try? await client.shutdown()
    }
}
