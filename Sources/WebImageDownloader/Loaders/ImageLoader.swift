public import Foundation

/// Something that brings image bytes for a URL (SDWebImage's `SDImageLoader`): the HTTP
/// ``ImageDownloader``, ``FileURLLoader``, ``DataURLLoader``, or an application's own.
public protocol ImageLoader: Sendable {
    /// Whether this loader handles `url`.
    func canLoad(_ url: URL) -> Bool
    /// Starts loading `url`; `events` receives progress, then one `finished` event, unless the
    /// returned token is cancelled first. Events may arrive on any thread (``ImageDownloader``
    /// sends progress from the HTTP client's event loop): a handler should return quickly and
    /// move heavy work elsewhere.
    func load(_ url: URL, options: LoadRequestOptions, events: @escaping @Sendable (LoadEvent) -> Void) -> LoadToken
}

extension ImageLoader {
    /// Loads `url` and returns its bytes. Cancelling the calling task cancels the load and throws
    /// `WebImageError.Code.cancelled`.
    public func loadData(_ url: URL, options: LoadRequestOptions = LoadRequestOptions()) async throws(WebImageError) -> LoadedData {
        let result = await withCancellableCallback(cancelled: .failure(WebImageError(.cancelled))) { resume in
            let token = load(url, options: options) { event in
                if case .finished(let result) = event { resume(result) }
            }
            return { token.cancel() }
        }
        return try result.get()
    }
}
