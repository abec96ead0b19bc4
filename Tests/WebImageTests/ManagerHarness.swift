import Foundation
import Synchronization
import Testing
import WebImage
import WebImageTesting

/// Counts decodes (and partial decodes) while passing them to the real coders, progressive and
/// animated decoding included, as a wrapping plugin would.
final class CountingCoder: ProgressiveImageCoder, AnimatedImageCoder {
    let decodes = Atomic(0)
    private let inner: [any ImageCoder] = [PNGCoder(), JPEGCoder(), GIFCoder(), WebPCoder()]

    func canDecode(_ format: ImageFormat) -> Bool { inner.contains { $0.canDecode(format) } }
    func decode(_ data: Data, options: DecodeOptions) throws(WebImageError) -> Image {
        decodes.add(1, ordering: .relaxed)
        let format = ImageFormat(sniffing: data)!
        return try inner.first { $0.canDecode(format) }!.decode(data, options: options)
    }
    func canEncode(to format: ImageFormat) -> Bool { inner.contains { $0.canEncode(to: format) } }
    func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws(WebImageError) -> Data {
        try inner.first { $0.canEncode(to: format) }!.encode(image, as: format, options: options)
    }
    func incrementalDecoder(for format: ImageFormat, options: DecodeOptions) -> (any IncrementalImageDecoder)? {
        inner.lazy.compactMap { $0 as? any ProgressiveImageCoder }.first { $0.canDecode(format) }?.incrementalDecoder(
            for: format, options: options)
    }
    func animatedImageProvider(for data: Data, format: ImageFormat, options: DecodeOptions, maximumBufferedFrames: Int)
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
final class CountingTransformer: ImageTransformer {
    let calls = Atomic(0)
    let inner: ResizingTransformer

    init(width: Int = 8, height: Int = 6) {
        inner = ResizingTransformer(width: width, height: height)
    }

    var transformerKey: String { inner.transformerKey }
    func transform(_ image: Image, forKey key: String) -> Image? {
        calls.add(1, ordering: .relaxed)
        return inner.transform(image, forKey: key)
    }
}

/// Everything a manager test needs: an origin, a downloader without retries, a cache in a
/// temporary directory, counting coders, and a way to wait for callbacks.
final class ManagerHarness: Sendable {
    let origin: OriginServer
    let downloader: ImageDownloader
    let directory: URL
    let coder = CountingCoder()
    let coders: CodersManager
    let png: Data
    let jpeg: Data

    static func start(retries: Int = 0) async throws -> ManagerHarness {
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
    func makeCache() throws -> ImageCache {
        ImageCache(memory: MemoryCache(), disk: try DiskCache(directory: directory), coders: coders)
    }

    func makeManager(
        cache: ImageCache? = nil, transformer: (any ImageTransformer)? = nil, delegate: (any ImageManagerDelegate)? = nil,
        cacheKeyFilter: CacheKeyFilter? = nil, cacheSerializer: CacheSerializer? = nil,
        optionsProcessor: OptionsProcessor? = nil
    ) throws -> ImageManager {
        ImageManager(
            cache: try cache ?? makeCache(), loader: downloader, coders: coders, transformer: transformer,
            cacheKeyFilter: cacheKeyFilter, cacheSerializer: cacheSerializer, optionsProcessor: optionsProcessor, delegate: delegate)
    }

    func servePNG(_ path: String, etag: String? = nil) {
        origin.route(path, OriginResponse(headers: [("Content-Type", "image/png")], body: [UInt8](png), etag: etag))
    }

    func shutdown() async throws {
        try await downloader.shutdown()
        try await origin.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }

    static func run(_ body: (ManagerHarness) async throws -> Void) async throws {
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
final class Deliveries: Sendable {
    let log = EventLog<Result<ImageResult, WebImageError>>()
    let progress = Locked<[(Int64, Int64?)]>([])

    var completion: ImageManager.CompletionHandler { { self.log.record($0) } }
    var progressHandler: ImageManager.ProgressHandler {
        { received, expected, _ in self.progress.withLock { $0.append((received, expected)) } }
    }

    var all: [Result<ImageResult, WebImageError>] { log.events }
    var count: Int { log.events.count }

    /// Waits until `count` deliveries arrived.
    func wait(for count: Int, timeout: Duration = .seconds(20)) async throws {
        let counter = Atomic(0)
        try await log.waitFor(timeout: timeout, "\(count) deliveries") { _ in counter.add(1, ordering: .relaxed).newValue >= count }
    }

    /// The single final result, after waiting for it.
    func result() async throws -> Result<ImageResult, WebImageError> {
        try await wait(for: 1)
        return all[0]
    }
}
