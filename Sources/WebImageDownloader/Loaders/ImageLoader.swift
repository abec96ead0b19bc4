public import Foundation

/// A source of image bytes for one or more URL schemes (SDWebImage's `SDImageLoader`).
///
/// A load is one `async` call: it returns the bytes with the response's metadata or throws a
/// `WebImageError`. Cancelling the calling task cancels the load, which then throws
/// `WebImageError.Code.cancelled`. A loader that queues its loads (``ImageDownloader``) queues
/// each at ``LoadRequestOptions/priority`` and moves it up when the calling task's priority is
/// escalated (`Task.escalatePriority(to:)`): that is how `ImageManager` passes on a
/// higher-priority caller that joins a load already waiting.
public protocol ImageLoader: Sendable {
    /// Whether this loader handles `url`.
    func canLoad(_ url: URL) -> Bool
    /// Loads `url`. `events` receives progress and, with ``LoadRequestOptions/progressive``,
    /// the data received so far, as bytes arrive, on any thread (``ImageDownloader`` sends them
    /// from the HTTP client's event loop): a handler should return quickly and move heavy work
    /// elsewhere. No event arrives after the call returns or throws.
    func loadData(_ url: URL, options: LoadRequestOptions, events: @escaping @Sendable (LoadEvent) -> Void)
        async throws(WebImageError) -> LoadedData
}

extension ImageLoader {
    /// Loads `url` and returns its bytes, without progress events.
    public func loadData(_ url: URL, options: LoadRequestOptions = LoadRequestOptions()) async throws(WebImageError) -> LoadedData {
        try await loadData(url, options: options, events: { _ in })
    }
}

extension LoadRequestOptions.Priority {
    /// The task priority a load of this priority runs at: a task escalated past it raises the
    /// load in its loader's queue.
    package var taskPriority: TaskPriority {
        switch self {
        case .low: .low
        case .normal: .medium
        case .high: .high
        }
    }

    /// The load priority for a task running at `priority`.
    package init(_ priority: TaskPriority) {
        if priority >= .high {
            self = .high
        } else if priority >= .medium {
            self = .normal
        } else {
            self = .low
        }
    }
}
