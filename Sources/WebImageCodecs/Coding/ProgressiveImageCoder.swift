public import Foundation

/// Decodes an image while it downloads (SDWebImage's `SDProgressiveImageCoder`): one instance per
/// download, fed the bytes received so far each time more arrive, answering a partial image when
/// there is something new to show (a new scan of a progressive JPEG, new rows of a WebP).
///
/// ``CodersManager/progressiveCoder(for:options:)`` makes one for a download's first bytes.
/// Calls come one at a time; the instance keeps what it showed last.
public protocol ProgressiveImageCoder: AnyObject, Sendable {
    /// The partial image for `data` (every byte so far), or nil when nothing new can be shown yet.
    func update(_ data: Data) -> Image?
}
