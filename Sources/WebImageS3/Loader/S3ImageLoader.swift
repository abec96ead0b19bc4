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
    /// apply to S3 and are not sent; its validators and timeout are.
    public func load(_ url: URL, options: LoadRequestOptions, events: @escaping @Sendable (LoadEvent) -> Void) -> LoadToken {
        guard let location = S3Location(url: url) else {
            events(.finished(.failure(WebImageError(.invalidURL, "\(url.absoluteString) is not s3://BUCKET/KEY"))))
            return .finished()
        }
        let getOptions = S3GetOptions(
            ifNoneMatch: options.validators?.etag, ifModifiedSince: options.validators?.lastModified.flatMap(HTTPDate.parse))
        // Delivered at most once, and never after the caller cancelled (the loader contract).
        let delivered = Locked(false)
        let deliver: @Sendable (Result<LoadedData, WebImageError>) -> Void = { result in
            let first = delivered.withLock { done in
                defer { done = true }
                return !done
            }
            if first { events(.finished(result)) }
        }
        // The callback protocol needs a task of its own per load; cancelling the token cancels
        // it, and the client's retries and body read stop with it.
        let task = Task { [client] in
            do throws(WebImageError) {
                let object = try await client.getObject(location, options: getOptions)
                deliver(.success(Self.loaded(object, url: url)))
            } catch {
                deliver(.failure(error))
            }
        }
        return LoadToken {
            delivered.withLock { $0 = true }
            task.cancel()
        }
    }

    private static func loaded(_ object: S3Object, url: URL) -> LoadedData {
        LoadedData(
            data: object.data, url: url, statusCode: 200, contentType: object.info.contentType, etag: object.info.etag,
            lastModified: object.info.lastModified.map(HTTPDate.format), cacheControl: object.info.cacheControl,
            expires: object.info.expires)
    }
}
