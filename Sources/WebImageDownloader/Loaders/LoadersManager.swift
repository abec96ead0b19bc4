public import Foundation

/// Several loaders behind one (SDWebImage's `SDImageLoadersManager`): each URL goes to the
/// last-added loader that can load it.
public final class LoadersManager: ImageLoader {
    private let loaders: Locked<[any ImageLoader]>

    /// A manager over `loaders`, the last one preferred.
    public init(loaders: [any ImageLoader]) {
        self.loaders = Locked(loaders)
    }

    /// Adds a loader ahead of the others.
    public func add(_ loader: any ImageLoader) {
        loaders.withLock { $0.append(loader) }
    }

    public func canLoad(_ url: URL) -> Bool {
        loader(for: url) != nil
    }

    /// Loads with the preferred loader for `url`; a URL no loader takes throws
    /// `WebImageError.Code.invalidURL` at once.
    public func loadData(_ url: URL, options: LoadRequestOptions, events: @escaping @Sendable (LoadEvent) -> Void)
        async throws(WebImageError) -> LoadedData
    {
        guard let loader = loader(for: url) else {
            throw WebImageError(.invalidURL, "no loader for \(url.absoluteString)")
        }
        return try await loader.loadData(url, options: options, events: events)
    }

    private func loader(for url: URL) -> (any ImageLoader)? {
        loaders.withLock { $0.last { $0.canLoad(url) } }
    }
}
