public import Foundation

/// Decodes and encodes images of some formats (SDWebImage's `SDImageCoder`).
///
/// Coders are plugins: ``CodersManager`` asks each, newest first, whether it handles a format. A
/// coder must throw a `WebImageError` for bad input, never crash or print.
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

/// A coder that can also decode an image while it downloads (SDWebImage's
/// `SDProgressiveImageCoder`), by making an ``IncrementalImageDecoder`` per download.
/// ``CodersManager`` asks the newest coder for the format that conforms; a plugin adds progressive
/// decoding for its format by conforming too.
public protocol ProgressiveImageCoder: ImageCoder {
    /// A new decoder for one download of `format`, or nil when this coder has none for it.
    func incrementalDecoder(for format: ImageFormat, options: DecodeOptions) -> (any IncrementalImageDecoder)?
}

/// A coder that can also decode animations on demand, frame by frame (SDWebImage's
/// `SDAnimatedImageCoder`), by making an ``AnimatedImageProvider`` per animation. ``CodersManager``
/// asks the newest coder for the format that conforms.
public protocol AnimatedImageCoder: ImageCoder {
    /// An animation over `data` (of `format`), or nil for a still image.
    /// - Throws: when `data` is an animation that cannot be read or is over the limits.
    func animatedImageProvider(for data: Data, format: ImageFormat, options: DecodeOptions, maximumBufferedFrames: Int)
        throws(WebImageError)
        -> (any AnimatedImageProvider)?
}

/// A coder whose encoder writes 16-bit pixels (``PixelBuffer/isHighBitDepth``) at a high bit
/// depth where its format holds them (the built-in PNG coder: 16-bit PNG with `cICP`; AVIF:
/// 10 or 12 bits with `nclx`; JPEG XL: 16 bits in the source's colour encoding; TIFF: 16-bit samples);
/// ``CodersManager/encode(_:as:options:)`` gives every other coder the 8-bit picture.
protocol HighBitDepthEncoding {}
