/// How to decode: limits, and the SDWebImage decode options that apply to a coder.
public struct DecodeOptions: Sendable, Equatable {
    /// Bounds checked before any pixel memory is allocated.
    public var limits: DecodeLimits
    /// Decode at about this size, through the codec's own scaling where it has one (JPEG's DCT
    /// scaling); nil decodes at full size.
    public var thumbnail: ThumbnailSize?
    /// Decode only the first frame of an animation.
    public var firstFrameOnly: Bool
    /// Keep at most this many frames of an animation, the first ones, with a warning when there
    /// were more (imgproxy's `IMGPROXY_MAX_ANIMATION_FRAMES`: a longer animation is cut, not
    /// refused). Nil keeps every frame the pixel limit allows.
    public var maximumFrames: Int?
    /// The scale to give the image.
    public var scale: Double
    /// Without a thumbnail: decode images whose bitmap would pass
    /// ``CodersManager/scaleDownLimitBytes`` at a size that fits it (SDWebImage's
    /// `scaleDownLargeImages`).
    public var scaleDownLargeImages: Bool
    /// Without a thumbnail: decode images whose RGBA bitmap would pass this many bytes at a
    /// size that fits it, whether or not ``scaleDownLargeImages`` is set (SDWebImage's
    /// `imageScaleDownLimitBytes`). Nil (the default) leaves the limit to
    /// ``scaleDownLargeImages``, which uses ``CodersManager/scaleDownLimitBytes``.
    public var scaleDownLimitBytes: Int?
    /// Accept data that ends early and show what arrived (the rows or scans so far), as
    /// browsers do and as a progressive download's partial image does: the missing rows are
    /// grey for JPEG (what libjpeg fills in) and transparent for PNG, and the image is marked
    /// ``Image/isPartial``. Off by default, as in SDWebImage: a file cut short is an error.
    /// Coders that cannot show part of an image fail as usual.
    public var acceptsTruncatedImages: Bool
    /// Keep the pixels in the source's colour profile, set as ``Image/colorProfile``, instead of
    /// converting them to sRGB (the default, as imgproxy's `strip_color_profile` and what a
    /// browser shows). Off by default.
    public var keepsColorProfile: Bool
    /// Keep the source's EXIF as ``Image/exif`` (JPEG's APP1, PNG's `eXIf`, WebP's `EXIF`), for
    /// encoders to write again. Off by default: results carry no metadata.
    public var keepsEXIF: Bool
    /// The application's own values for this load (`LoadContext.subscript(_:)`), for a
    /// plugin coder that needs them.
    public var values: CustomValues
    /// Keep more than 8 bits a sample where the file has them: a 16-bit PNG or APNG (or one whose
    /// `cICP` says PQ or HLG), an AVIF (still or sequence) or a still HEIF of 10 or 12 bits, a JPEG
    /// XL (still or animated) of more than 8, a TIFF's pages of 9 to 16 (unsigned, alpha not
    /// associated) and one frame of a video of 10 or 12 bits are decoded to 16-bit
    /// ``PixelBuffer``s (samples scaled to 0...65535) in their own transfer and primaries
    /// (``Image/sourceColor``), not tone-mapped or reduced; an ICC profile to convert from is
    /// converted to sRGB at 16 bits (lcms's 16-bit transform). Other formats and several frames of
    /// a video decode to 8 bits as usual. Such a decode is charged twice its pixels against the
    /// ``limits`` (an animation keeps the first frames that fit). Off by default (imgproxy's
    /// `preserve_hdr`).
    public var keepsHighBitDepth = false
    /// Which frames of a video to take (``VideoFrameSelection``): by default its first keyframe.
    public var video = VideoFrameSelection()

    /// Creates options; the defaults decode everything at full size with the default limits.
    public init(
        limits: DecodeLimits = DecodeLimits(), thumbnail: ThumbnailSize? = nil, firstFrameOnly: Bool = false, scale: Double = 1,
        scaleDownLargeImages: Bool = false, scaleDownLimitBytes: Int? = nil, acceptsTruncatedImages: Bool = false,
        keepsColorProfile: Bool = false, keepsEXIF: Bool = false, values: CustomValues = CustomValues()
    ) {
        self.keepsColorProfile = keepsColorProfile
        self.keepsEXIF = keepsEXIF
        self.values = values
        self.limits = limits
        self.thumbnail = thumbnail
        self.firstFrameOnly = firstFrameOnly
        self.scale = scale
        self.scaleDownLargeImages = scaleDownLargeImages
        self.scaleDownLimitBytes = scaleDownLimitBytes
        self.acceptsTruncatedImages = acceptsTruncatedImages
    }
}
