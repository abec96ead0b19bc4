public import Foundation

/// Decodes an image while it downloads (the incremental half of SDWebImage's
/// `SDProgressiveImageCoder`, `updateIncrementalData`): one instance per download, made by a
/// ``ProgressiveImageCoder``, fed the bytes received so far each time more arrive, answering a
/// partial image when there is something new to show (a new scan of a progressive JPEG, new rows of
/// a WebP).
///
/// ``CodersManager/incrementalDecoder(for:options:)`` makes one for a download's first bytes. Calls
/// come one at a time; the instance keeps what it showed last.
public protocol IncrementalImageDecoder: AnyObject, Sendable {
    /// The partial image for `data` (every byte so far), or nil when nothing new can be shown yet.
    func update(_ data: Data) -> Image?
}
