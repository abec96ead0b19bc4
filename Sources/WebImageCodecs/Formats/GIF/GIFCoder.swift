package import Foundation
import CGIF

/// GIF through giflib: every frame composed onto the canvas with its disposal method and
/// transparency, frame delays by SDWebImage's rule (under 0.011 s becomes 0.1 s), the loop count
/// from the NETSCAPE2.0 extension (1 when absent), and first-frame-only decoding. Files browsers
/// show are read (`GIFRecordReader`: empty extensions, no trailer, frames past the screen
/// clipped, no colour table read as a grey ramp); a file that ends inside a frame is a
/// `WebImageError.Code.decodeFailed` unless truncated images are accepted. The canvas is
/// checked against the limits first, and every frame's declared size before its pixels are read
/// (a frame is held at its declared size, however small the canvas); all frames together count
/// toward the pixel budget.
/// Encodes still and animated GIFs with giflib's quantiser.
package struct GIFCoder: ImageCoder {
    /// Creates the coder.
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .gif }

    public func canEncode(to format: ImageFormat) -> Bool { format == .gif }

    /// Encodes a still or animated GIF (see `GIFEncoder`); the quality option does not apply.
    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws(WebImageError) -> Data {
        guard format == .gif else { throw WebImageError(.unsupportedFormat, "GIFCoder encodes only GIF") }
        return try GIFEncoder.encode(image)
    }

    public func decode(_ data: Data, options: DecodeOptions) throws(WebImageError) -> Image {
        var source = try GIFFrameSource(data, limits: options.limits, acceptTruncated: options.acceptsTruncatedImages)
        return try source.image(options: options, inputSize: data.count, format: .gif)
    }
}

extension GIFCoder: AnimatedImageCoder {
    /// A GIF's frames on demand; nil for a GIF of one frame.
    public func animatedImageProvider(for data: Data, format: ImageFormat, options: DecodeOptions, maximumBufferedFrames: Int)
        throws(WebImageError) -> (any AnimatedImageProvider)?
    {
        guard format == .gif else { return nil }
        return AnimatedImageDecoder.ifAnimated(
            try GIFFrameSource(data, limits: options.limits, acceptTruncated: options.acceptsTruncatedImages),
            maximumBufferedFrames: maximumBufferedFrames)
    }
}
