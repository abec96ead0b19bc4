import Foundation

/// Changes or cancels a request before it is sent (SDWebImage's `SDWebImageDownloaderRequestModifier`): return nil to cancel the load, which then fails with `WebImageError.Code.rejected`.
///
/// Given per request through `LoadRequestOptions` (or the manager's `LoadContext`), it takes
/// the place of the downloader's configured one. Two loads share a transfer only when they carry
/// the same instance, so the type compares by identity.
public final class DownloadRequestModifier: Sendable, Hashable {
    /// The closure that does the work.
    public let modify: @Sendable (DownloadRequest) async -> DownloadRequest?

    /// Wraps a closure.
    public init(_ modify: @escaping @Sendable (DownloadRequest) async -> DownloadRequest?) {
        self.modify = modify
    }

    public static func == (lhs: DownloadRequestModifier, rhs: DownloadRequestModifier) -> Bool {
        lhs === rhs
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}
