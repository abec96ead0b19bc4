public import Foundation

/// Turns downloaded bytes into image bytes (SDWebImage's `SDWebImageDownloaderDecryptor`), for origins that encode their images: return nil to reject the bytes with `WebImageError.Code.rejected`.
///
/// Given per request through `LoadRequestOptions` (or the manager's `LoadContext`), it takes
/// the place of the downloader's configured one. Two loads share a transfer only when they carry
/// the same instance, so the type compares by identity.
public final class DownloadDecryptor: Sendable, Hashable {
    /// The closure that does the work.
    public let decrypt: @Sendable (Data, DownloadResponseHead) -> Data?

    /// Wraps a closure.
    public init(_ decrypt: @escaping @Sendable (Data, DownloadResponseHead) -> Data?) {
        self.decrypt = decrypt
    }

    public static func == (lhs: DownloadDecryptor, rhs: DownloadDecryptor) -> Bool {
        lhs === rhs
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}
