import Foundation

/// Changes or rejects a response's head before its body is read (SDWebImage's `SDWebImageDownloaderResponseModifier`): return nil to reject it with `WebImageError.Code.rejected`.
///
/// Given per request through `LoadRequestOptions` (or the manager's `LoadContext`), it takes
/// the place of the downloader's configured one. Two loads share a transfer only when they carry
/// the same instance, so the type compares by identity.
public final class DownloadResponseModifier: Sendable, Hashable {
    /// The closure that does the work.
    public let modify: @Sendable (DownloadResponseHead) -> DownloadResponseHead?

    /// Wraps a closure.
    public init(_ modify: @escaping @Sendable (DownloadResponseHead) -> DownloadResponseHead?) {
        self.modify = modify
    }

    public static func == (lhs: DownloadResponseModifier, rhs: DownloadResponseModifier) -> Bool {
        lhs === rhs
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}
