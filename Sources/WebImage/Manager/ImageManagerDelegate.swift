public import Foundation

/// Decisions an application can make for a manager (SDWebImage's `SDWebImageManagerDelegate`).
/// Both have defaults, so a delegate implements only what it needs.
public protocol ImageManagerDelegate: Sendable {
    /// Whether to load `url` after a cache miss (or to revalidate it). Default true; false
    /// ends the load with `WebImageError.Code.rejected`.
    func imageManager(_ manager: ImageManager, shouldDownloadImageFor url: URL) -> Bool
    /// Whether a failed `url` goes on the failed-URL list. Default: unless the error is
    /// transient (`WebImageError.isTransient`).
    func imageManager(_ manager: ImageManager, shouldBlockFailedURL url: URL, error: WebImageError) -> Bool
}

extension ImageManagerDelegate {
    public func imageManager(_ manager: ImageManager, shouldDownloadImageFor url: URL) -> Bool { true }

    public func imageManager(_ manager: ImageManager, shouldBlockFailedURL url: URL, error: WebImageError) -> Bool {
        !error.isTransient
    }
}
