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
    /// ``WebImageError/Code/cancelled``.
    public func loadData(_ url: URL, options: LoadRequestOptions = LoadRequestOptions()) async throws(WebImageError) -> LoadedData {
        let box = Locked<(token: LoadToken?, continuation: CheckedContinuation<Result<LoadedData, WebImageError>, Never>?)>((nil, nil))
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                box.withLock { $0.continuation = continuation }
                // A task cancelled before the continuation existed found nothing to resume.
                if Task.isCancelled {
                    box.withLock { $0.continuation.take() }?.resume(returning: .failure(WebImageError(.cancelled)))
                    return
                }
                let token = load(url, options: options) { event in
                    guard case .finished(let result) = event else { return }
                    box.withLock { $0.continuation.take() }?.resume(returning: result)
                }
                box.withLock { $0.token = token }
            }
        } onCancel: {
            let (token, continuation) = box.withLock { state in (state.token, state.continuation.take()) }
            token?.cancel()
            continuation?.resume(returning: .failure(WebImageError(.cancelled)))
        }
        return try result.get()
    }
}
