import Foundation
import WebImage

/// The manager a command loads through: the cache directory's disk cache (or memory only), its
/// own downloader, and `s3://` URLs with the AWS settings; shut down at the end.
struct LoadSession {
    let manager: ImageManager
    let cache: ImageCache
    private let downloader: ImageDownloader
    private let s3 = EnvironmentS3Loader()
    /// A second downloader for text (`robots.txt`), with the same network settings (address
    /// guard, proxy, TLS) but taking `text/plain`; nil unless asked for.
    let textLoader: ImageDownloader?

    init(
        cache options: CacheOptions, memoryOnly: Bool, network: NetworkOptions, concurrency: Int = 6, politeness: HostPoliteness? = nil,
        adjust: (inout ImageDownloaderConfiguration) -> Void = { _ in },
        adjustText: ((inout ImageDownloaderConfiguration) -> Void)? = nil
    ) throws {
        let freshness: CacheFreshnessPolicy = network.respectCacheControl ? .respectCacheControl() : .useCachedAsIs
        var configuration = ImageDownloaderConfiguration(maximumConcurrentDownloads: concurrency, hostPoliteness: politeness)
        try network.apply(to: &configuration, environment: ProcessInfo.processInfo.environment)
        if let adjustText {
            var text = configuration
            text.acceptableContentTypes = ["text/plain"]
            text.maximumBodySize = 512 * 1024
            adjustText(&text)
            textLoader = ImageDownloader(configuration: text)
        } else {
            textLoader = nil
        }
        adjust(&configuration)
        downloader = ImageDownloader(configuration: configuration)
        cache = ImageCache(disk: memoryOnly ? nil : try options.openDiskCache())
        manager = ImageManager(
            cache: cache, loader: LoadersManager(loaders: [DataURLLoader(), FileURLLoader(), downloader, s3]),
            configuration: ImageManagerConfiguration(cacheFreshness: freshness))
    }

    func shutdown() async throws {
        try await downloader.shutdown()
        try await s3.shutdown()
        try await textLoader?.shutdown()
        try cache.disk?.flush()
        cache.disk?.close()
    }
}
