public import Foundation
import WebImageCore
public import WebImageDownloader

/// Loads `gs://BUCKET/OBJECT` URLs with a ``GCSClient``, so that `ImageManager`, the prefetcher
/// and the proxy read Cloud Storage with the caching and coalescing they give HTTP. The
/// object's `ETag`, `Last-Modified`, `Content-Type` and `Cache-Control` are kept with the bytes.
///
/// ```swift
/// let gcs = GCSImageLoader(client: GCSClient(configuration: try .fromEnvironment()))
/// let manager = ImageManager(loader: LoadersManager(loaders: [ImageDownloader.shared, gcs]), configuration: ImageManagerConfiguration())
/// let result = try await manager.image(for: URL(string: "gs://photos/cats/1.jpg")!)
/// ```
public struct GCSImageLoader: ImageLoader {
    /// The client every load goes through.
    public let client: GCSClient

    /// Creates a loader on `client`.
    public init(client: GCSClient) {
        self.client = client
    }

    /// Whether `url` is a `gs:` URL.
    public func canLoad(_ url: URL) -> Bool {
        url.scheme?.lowercased() == "gs"
    }

    /// Gets the object whole. The HTTP parts of `options` do not apply to Cloud Storage and are
    /// not sent; cancelling the calling task stops the client's retries and body read.
    public func loadData(_ url: URL, options: LoadRequestOptions, events: @escaping @Sendable (LoadEvent) -> Void)
        async throws(WebImageError) -> LoadedData
    {
        guard let location = GCSLocation(url: url) else {
            throw WebImageError(.invalidURL, "\(url.absoluteString) is not gs://BUCKET/OBJECT")
        }
        do throws(WebImageError) {
            let object = try await client.getObject(location)
            return LoadedData(
                data: object.data, url: url, statusCode: 200, contentType: object.info.contentType, etag: object.info.etag,
                lastModified: object.info.lastModified, cacheControl: object.info.cacheControl, expires: nil)
        } catch {
            if Task.isCancelled { throw WebImageError(.cancelled) }
            throw error
        }
    }
}
