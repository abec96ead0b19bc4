package import Foundation
package import Synchronization
package import WebImage
package import WebImageTesting

/// Counts decodes (and partial decodes) while passing them to the real coders, progressive and
/// animated decoding included, as a wrapping plugin would.
package final class CountingCoder: ProgressiveImageCoder, AnimatedImageCoder {
    package let decodes = Atomic(0)
    private let inner: [any ImageCoder] = [PNGCoder(), JPEGCoder(), GIFCoder(), WebPCoder()]

    package func canDecode(_ format: ImageFormat) -> Bool { inner.contains { $0.canDecode(format) } }
    package func decode(_ data: Data, options: DecodeOptions) throws(WebImageError) -> Image {
        decodes.add(1, ordering: .relaxed)
        let format = ImageFormat(sniffing: data)!
        return try inner.first { $0.canDecode(format) }!.decode(data, options: options)
    }
    package func canEncode(to format: ImageFormat) -> Bool { inner.contains { $0.canEncode(to: format) } }
    package func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws(WebImageError) -> Data {
        try inner.first { $0.canEncode(to: format) }!.encode(image, as: format, options: options)
    }
    package func incrementalDecoder(for format: ImageFormat, options: DecodeOptions) -> (any IncrementalImageDecoder)? {
        inner.lazy.compactMap { $0 as? any ProgressiveImageCoder }.first { $0.canDecode(format) }?.incrementalDecoder(
            for: format, options: options)
    }
    package func animatedImageProvider(for data: Data, format: ImageFormat, options: DecodeOptions, maximumBufferedFrames: Int)
        throws(WebImageError)
        -> (any AnimatedImageProvider)?
    {
        guard let coder = inner.lazy.compactMap({ $0 as? any AnimatedImageCoder }).first(where: { $0.canDecode(format) }) else {
            return nil
        }
        return try coder.animatedImageProvider(for: data, format: format, options: options, maximumBufferedFrames: maximumBufferedFrames)
    }
}

/// Counts its calls while resizing for real.
package final class CountingTransformer: ImageTransformer {
    package let calls = Atomic(0)
    package let inner: ResizingTransformer

    package init(width: Int = 8, height: Int = 6) {
        inner = ResizingTransformer(width: width, height: height)
    }

    package var transformerKey: String { inner.transformerKey }
    package func transform(_ image: Image, forKey key: String) -> Image? {
        calls.add(1, ordering: .relaxed)
        return inner.transform(image, forKey: key)
    }
}

/// Everything a manager test needs: an origin, a downloader without retries, a cache in a
/// temporary directory, counting coders, and a way to wait for callbacks.
package final class ManagerHarness: Sendable {
    package let origin: OriginServer
    package let downloader: ImageDownloader
    package let directory: URL
    package let coder = CountingCoder()
    package let coders: CodersManager
    package let png: Data
    package let jpeg: Data

    package static func start(retries: Int = 0) async throws -> ManagerHarness {
        let origin = try await OriginServer.start()
        return try ManagerHarness(origin: origin, retries: retries)
    }

    private init(origin: OriginServer, retries: Int) throws {
        self.origin = origin
        downloader = ImageDownloader(
            configuration: ImageDownloaderConfiguration(retryPolicy: RetryPolicy(maximumRetries: retries, baseDelay: .milliseconds(1))))
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-manager-\(UUID().uuidString)")
        coders = CodersManager(coders: [coder])
        png = try Fixture.data("gradient-rgba.png")
        jpeg = try Fixture.data("gradient.jpg")
    }

    /// A cache over the harness's directory; a second call gives a fresh memory tier over the same disk.
    package func makeCache() throws -> ImageCache {
        ImageCache(memory: MemoryCache(), disk: try DiskCache(directory: directory), coders: coders)
    }

    package func makeManager(
        cache: ImageCache? = nil, transformer: (any ImageTransformer)? = nil, delegate: (any ImageManagerDelegate)? = nil,
        cacheKeyFilter: CacheKeyFilter? = nil, cacheSerializer: CacheSerializer? = nil,
        optionsProcessor: OptionsProcessor? = nil
    ) throws -> ImageManager {
        ImageManager(
            cache: try cache ?? makeCache(), loader: downloader, coders: coders, transformer: transformer,
            cacheKeyFilter: cacheKeyFilter, cacheSerializer: cacheSerializer, optionsProcessor: optionsProcessor, delegate: delegate)
    }

    package func servePNG(_ path: String, etag: String? = nil) {
        origin.route(path, OriginResponse(headers: [("Content-Type", "image/png")], body: [UInt8](png), etag: etag))
    }

    package func shutdown() async throws {
        try await downloader.shutdown()
        try await origin.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }

    package static func run(_ body: (ManagerHarness) async throws -> Void) async throws {
        let harness = try await start()
        do {
            try await body(harness)
        } catch {
            try? await harness.shutdown()
            throw error
        }
        try await harness.shutdown()
    }
}

/// What one or more loads delivered, to wait on.
package final class Deliveries: Sendable {
    package init() {}

    package let log = EventLog<Result<ImageResult, WebImageError>>()
    package let progress = Locked<[(Int64, Int64?)]>([])

    package var completion: ImageManager.CompletionHandler { { self.log.record($0) } }
    package var progressHandler: ImageManager.ProgressHandler {
        { received, expected, _ in self.progress.withLock { $0.append((received, expected)) } }
    }

    package var all: [Result<ImageResult, WebImageError>] { log.events }
    package var count: Int { log.events.count }

    /// Waits until `count` deliveries arrived. The timeout only guards against a hang: under a
    /// sanitizer, CPU-bound tests running beside can hold both cooperative threads for minutes
    /// (the planar resize tests took 264 s under ThreadSanitizer, which is why scripts/sanitize.sh
    /// now runs the codecs' suites apart), after which a 20 s guard has long expired and fires
    /// before the delivery that became ready with it.
    package func wait(for count: Int, timeout: Duration = Sanitizer.isActive ? .seconds(600) : .seconds(20)) async throws {
        let counter = Atomic(0)
        try await log.waitFor(timeout: timeout, "\(count) deliveries") { _ in counter.add(1, ordering: .relaxed).newValue >= count }
    }

    /// The single final result, after waiting for it.
    package func result() async throws -> Result<ImageResult, WebImageError> {
        try await wait(for: 1)
        return all[0]
    }
}
