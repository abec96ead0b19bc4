public import Foundation

/// An image's bytes, undecoded, with what the origin said about them: what
/// ``ImageManager/data(for:)`` returns.
public struct ImageData: Sendable {
    /// The encoded bytes, as the loader received them (or as the disk kept them).
    public var data: Data
    /// The response's content type, validators (`ETag`, `Last-Modified`) and freshness, as
    /// stored beside the bytes; empty for bytes from a loader with no response headers (a file)
    /// or a disk entry stored without metadata.
    public var metadata: DiskCacheMetadata
    /// ``ImageCacheType/disk`` when the disk tier answered, ``ImageCacheType/none`` when the loader did.
    public var cacheType: ImageCacheType
    /// The URL asked for.
    public var url: URL
    /// The URL the bytes came from after redirects; nil for bytes from the cache.
    public var finalURL: URL?

    /// Creates a value.
    public init(data: Data, metadata: DiskCacheMetadata, cacheType: ImageCacheType, url: URL, finalURL: URL? = nil) {
        self.data = data
        self.metadata = metadata
        self.cacheType = cacheType
        self.url = url
        self.finalURL = finalURL
    }
}

extension ImageManager {
    /// The bytes a request names, never decoded, with the response's metadata (Nuke's
    /// `data(for:)`): the disk tier first (revalidated as the manager's ``CacheFreshnessPolicy``
    /// says, a 304 renewing the entry), else the loader; what the loader returns is stored
    /// before this returns, under the key the URL's original bytes always have (no thumbnail,
    /// no transformer), so a later image load of the URL finds them.
    ///
    /// Identical byte requests share one download however many callers wait; the memory tier,
    /// which holds decoded images, is neither read nor filled. The request's options apply
    /// (`.fromCacheOnly`, `.fromLoaderOnly`, `.refreshCached`, `.retryFailed`, the loader's
    /// options); `.avoidDecodeImage` and `.waitStoreCache` are implied.
    ///
    /// ```swift
    /// let fetched = try await ImageManager.shared.data(for: ImageRequest(url: url))
    /// print(fetched.data.count, fetched.metadata.contentType ?? "?", fetched.metadata.etag ?? "no ETag")
    /// ```
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled, else a `WebImageError`.
    public func data(for request: ImageRequest) async throws -> ImageData {
        let result = try await load(Self.bytesOnly(request), bytesOnly: true)
        guard let data = result.data else {
            throw WebImageError(.cacheMiss, "the cache answered \(result.url.absoluteString) with an image but no bytes")
        }
        return ImageData(
            data: data, metadata: result.metadata ?? DiskCacheMetadata(), cacheType: result.cacheType, url: result.url,
            finalURL: result.finalURL)
    }

    /// ``data(for:)`` for a caller that holds a copy and asks whether it changed (a proxy passing
    /// its client's `If-None-Match` on): the disk tier's copy when it is fresh, as the origin
    /// would answer (a cache may answer a conditional request from a fresh copy, RFC 9111
    /// 4.3.2); else the loader asked with `validators`, whose 304 throws
    /// `WebImageError.Code.notModified` (the response's head as its underlying error) and whose
    /// full answer is stored as ``data(for:)`` stores it. Not shared with other callers: the
    /// answer is for these validators only.
    package func data(for request: ImageRequest, validators: HTTPValidators) async throws -> ImageData {
        var cacheOnly = request
        cacheOnly.options.insert(.fromCacheOnly)
        do {
            return try await data(for: cacheOnly)
        } catch let error as WebImageError where error.code == .cacheMiss {
            // Not stored, or stale: the origin decides.
        }
        guard let url = request.url, !url.absoluteString.isEmpty else { throw WebImageError(.invalidURL, "the URL is nil or empty") }
        let resolved = resolve(url, source: Self.bytesOnly(request), bytesOnly: true)
        var options = resolved.requestOptions
        options.validators = validators
        let loaded = try await resolved.loader.loadData(url, options: options)
        let result = ImageResult(
            image: nil, data: loaded.data, cacheType: .none, url: url, finalURL: loaded.url, metadata: metadata(of: loaded))
        try await store(result, loaded: loaded, request: resolved)
        return ImageData(
            data: loaded.data, metadata: result.metadata ?? DiskCacheMetadata(), cacheType: .none, url: url, finalURL: loaded.url)
    }

    /// `request` as a byte load makes it: never decoded, stored before it returns, on the disk
    /// tier only (the memory tier holds decoded images).
    private static func bytesOnly(_ request: ImageRequest) -> ImageRequest {
        var request = request
        request.options.formUnion([.avoidDecodeImage, .waitStoreCache])
        request.options.remove(.queryMemoryData)
        request.context.queryCacheType = diskOnly(request.context.queryCacheType)
        request.context.storeCacheType = diskOnly(request.context.storeCacheType)
        return request
    }

    /// The tiers of `tiers` (default all) that hold bytes: the disk's.
    private static func diskOnly(_ tiers: ImageCacheType?) -> ImageCacheType {
        (tiers ?? .all).includesDisk ? .disk : .none
    }
}
