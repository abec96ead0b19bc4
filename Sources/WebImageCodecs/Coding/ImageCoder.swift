public import Foundation

/// Decodes and encodes images of some formats (SDWebImage's `SDImageCoder`).
///
/// Coders are plugins: ``CodersManager`` asks each, newest first, whether it handles a format.
/// A coder must throw a ``WebImageError`` for bad input, never crash or print.
public protocol ImageCoder: Sendable {
    /// Whether the coder decodes `format`.
    func canDecode(_ format: ImageFormat) -> Bool
    /// Decodes `data`, which sniffed as a format this coder decodes.
    func decode(_ data: Data, options: DecodeOptions) throws(WebImageError) -> Image
    /// Whether the coder encodes to `format`.
    func canEncode(to format: ImageFormat) -> Bool
    /// Encodes `image` as `format`.
    func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws(WebImageError) -> Data
}
