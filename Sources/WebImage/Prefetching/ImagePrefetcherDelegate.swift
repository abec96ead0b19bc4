public import Foundation

/// Hears each URL a prefetcher finishes and the end of each batch (SDWebImage's
/// `SDWebImagePrefetcherDelegate`). Both methods have empty defaults.
public protocol ImagePrefetcherDelegate: Sendable {
    /// One URL of a batch finished (loaded or failed).
    func imagePrefetcher(
        _ prefetcher: ImagePrefetcher, didPrefetch url: URL, result: Result<ImageResult, WebImageError>?, finishedCount: Int,
        totalCount: Int)
    /// A batch finished: how many URLs loaded and how many failed.
    func imagePrefetcher(_ prefetcher: ImagePrefetcher, didFinishWithTotalCount totalCount: Int, skippedCount: Int)
}

extension ImagePrefetcherDelegate {
    public func imagePrefetcher(
        _ prefetcher: ImagePrefetcher, didPrefetch url: URL, result: Result<ImageResult, WebImageError>?, finishedCount: Int,
        totalCount: Int
    ) {}
    public func imagePrefetcher(_ prefetcher: ImagePrefetcher, didFinishWithTotalCount totalCount: Int, skippedCount: Int) {}
}
