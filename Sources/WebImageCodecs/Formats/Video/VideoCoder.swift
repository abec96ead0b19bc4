#if Video
public import Foundation
public import WebImageCore

/// Decodes videos (MP4, QuickTime, WebM) to their frames through FFmpeg: the frames
/// ``DecodeOptions/video`` selects (by default the first keyframe), as a still image or, for
/// more than one frame, an animation whose frames last the selection's step. One of the
/// built-in coders in a build with the package's `Video` trait; encodes nothing.
///
/// ```swift
/// var options = DecodeOptions()
/// options.video = VideoFrameSelection(second: 2.5)
/// let poster = try CodersManager.shared.decode(mp4Data, options: options)
/// ```
public struct VideoCoder: ImageCoder {
    /// A video coder.
    public init() {}

    /// True for ``ImageFormat/mp4``, ``ImageFormat/quickTime`` and ``ImageFormat/webM``.
    public func canDecode(_ format: ImageFormat) -> Bool {
        format.isVideo
    }

    /// The selected frames of `data`; `options.firstFrameOnly` takes one frame whatever the selection's count.
    /// An HDR video's frames are tone-mapped to SDR as an HDR still is; with
    /// ``DecodeOptions/keepsHighBitDepth``, one frame of a video of more than 8 bits is kept at 16.
    public func decode(_ data: Data, options: DecodeOptions) throws(WebImageError) -> Image {
        guard let format = ImageFormat(sniffing: data), format.isVideo else {
            throw WebImageError(.notAnImage, "not an MP4, QuickTime or WebM video")
        }
        var selection = options.video
        if options.firstFrameOnly { selection.count = 1 }
        if let maximumFrames = options.maximumFrames { selection.count = min(selection.count, max(1, maximumFrames)) }
        var decoder = VideoDecoder(selection: selection, limits: options.limits)
        decoder.keepsHighBitDepth = options.keepsHighBitDepth
        return try decoder.image(of: data, format: format)
    }

    /// False: videos are read, not written.
    public func canEncode(to format: ImageFormat) -> Bool {
        false
    }

    /// Throws `unsupportedFormat`: videos are read, not written.
    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws(WebImageError) -> Data {
        throw WebImageError(.unsupportedFormat, "videos are read, not written")
    }
}
#endif
