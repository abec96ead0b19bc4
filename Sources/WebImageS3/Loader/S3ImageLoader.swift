public import Foundation
import WebImageCore
public import WebImageDownloader

/// Loads `s3://BUCKET/KEY` URLs (`?versionId=V` for a version) with an ``S3Client``, so that
/// `ImageManager`, the prefetcher and targets read buckets with the caching, coalescing and
/// revalidation they give HTTP: the object's ETag and Last-Modified are kept with the bytes,
/// and a stale entry is revalidated with `If-None-Match` / `If-Modified-Since`, an unchanged
/// object answering `notModified` (S3's 304).
///
/// ```swift
/// let s3 = S3ImageLoader(client: S3Client(configuration: try .fromEnvironment()))
/// let manager = ImageManager(loader: LoadersManager(loaders: [ImageDownloader.shared, s3]), configuration: ImageManagerConfiguration())
/// let result = try await manager.image(for: URL(string: "s3://photos/cats/1.jpg")!)
/// ```
public struct S3ImageLoader: ImageLoader {
    /// The client every load goes through.
    public let client: S3Client

    /// Creates a loader on `client`.
    public init(client: S3Client) {
        self.client = client
    }

    /// Whether `url` is an `s3:` URL.
    public func canLoad(_ url: URL) -> Bool {
        url.scheme?.lowercased() == "s3"
    }

    /// Gets the object. The HTTP parts of `options` (method, headers, body, modifiers) do not
    /// apply to S3 and are not sent; its validators are.
    /// Cancelling the calling task stops the client's retries and body read.
    public func loadData(_ url: URL, options: LoadRequestOptions, events: @escaping @Sendable (LoadEvent) -> Void)
        async throws(WebImageError) -> LoadedData
    {
        guard let location = S3Location(url: url) else {
            throw WebImageError(.invalidURL, "\(url.absoluteString) is not s3://BUCKET/KEY")
        }
        let getOptions = S3GetOptions(
            ifNoneMatch: options.validators?.etag, ifModifiedSince: options.validators?.lastModified.flatMap(HTTPDate.parse))
        do throws(WebImageError) {
            return Self.loaded(try await client.getObject(location, options: getOptions), url: url)
        } catch {
            // However the client's request ended, a caller that left hears that it left.
            if Task.isCancelled { throw WebImageError(.cancelled) }
            throw error
        }
    }

    private static func loaded(_ object: S3Object, url: URL) -> LoadedData {
        LoadedData(
            data: object.data, url: url, statusCode: 200, contentType: object.info.contentType, etag: object.info.etag,
            lastModified: object.info.lastModified.map(HTTPDate.format), cacheControl: object.info.cacheControl,
            expires: object.info.expires)
    }
}
