public import Foundation
import Synchronization

/// The URLs whose load failed for good (SDWebImage's `failedURLs`): loading them again fails at
/// once with ``WebImageError/Code/blockedURL`` unless the load asks `.retryFailed`.
public final class FailedURLs: Sendable {
    private let urls = Locked(Set<URL>())
    /// The list's size, read without the lock: every load checks the list, and it is almost
    /// always empty.
    private let size = Atomic(0)

    /// An empty list.
    public init() {}

    /// Whether `url` is on the list.
    public func contains(_ url: URL) -> Bool {
        guard size.load(ordering: .acquiring) > 0 else { return false }
        return urls.withLock { $0.contains(url) }
    }

    /// Puts `url` on the list.
    public func insert(_ url: URL) {
        urls.withLock { urls in
            urls.insert(url)
            size.store(urls.count, ordering: .releasing)
        }
    }

    /// Takes `url` off the list.
    public func remove(_ url: URL) {
        guard size.load(ordering: .acquiring) > 0 else { return }
        urls.withLock { urls in
            urls.remove(url)
            size.store(urls.count, ordering: .releasing)
        }
    }

    /// Empties the list.
    public func removeAll() {
        urls.withLock { urls in
            urls.removeAll()
            size.store(0, ordering: .releasing)
        }
    }

    /// How many URLs are on the list.
    public var count: Int {
        size.load(ordering: .acquiring)
    }
}
