import Foundation
import WebImage
import WebImageDataset

/// The manager a command loads through: the cache directory's disk cache (or memory only), its
/// own downloader, and `s3://`, `gs://`, `file:` and `data:` URLs when the command allows them (`prefetch`
/// allows only what `--allowed-url-schemes` names); shut down at the end.
struct LoadSession {
    let manager: ImageManager
    let cache: ImageCache
    private let downloader: ImageDownloader
    private let s3 = EnvironmentBucketLoader.s3()
    private let gcs = EnvironmentBucketLoader.gcs()
    /// A second downloader for text (`robots.txt`), with the same network settings (address
    /// guard, proxy, TLS) but taking `text/plain`; nil unless asked for.
    let textLoader: ImageDownloader?

    init(
        cache options: CacheOptions, memoryOnly: Bool, network: NetworkOptions, concurrency: Int = 6, politeness: HostPoliteness? = nil,
        schemes: Set<String> = RowSchemes.known,
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
        // Only the loaders of the schemes allowed: a refused scheme has no way in even past the
        // rows' own check.
        var loaders: [any ImageLoader] = [downloader]
        if schemes.contains("data") { loaders.append(DataURLLoader()) }
        if schemes.contains("file") { loaders.append(FileURLLoader()) }
        if schemes.contains("s3") { loaders.append(s3) }
        if schemes.contains("gs") { loaders.append(gcs) }
        manager = ImageManager(
            cache: cache, loader: LoadersManager(loaders: loaders),
            configuration: ImageManagerConfiguration(cacheFreshness: freshness))
    }

    func shutdown() async throws {
        try await downloader.shutdown()
        try await s3.shutdown()
        try await gcs.shutdown()
        try await textLoader?.shutdown()
        try cache.disk?.flush()
        cache.disk?.close()
    }
}
