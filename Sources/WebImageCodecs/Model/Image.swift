public import Foundation

/// A decoded image: frames of straight RGBA pixels, with what is needed to show them.
///
/// A still image has one frame. An animated image has several, each with its duration, and a
/// loop count. The scale says how many pixels make one point (2 for a `@2x` asset); the
/// orientation says how to turn the pixels upright. ``memoryCost`` is what a memory cache
/// charges for the image.
public struct Image: Sendable, Equatable {
    /// The frames; at least one.
    public var frames: [ImageFrame]
    /// How many times an animation plays; 0 means forever.
    public var loopCount: Int
    /// Pixels per point.
    public var scale: Double
    /// How to turn the stored pixels upright.
    public var orientation: ExifOrientation
    /// The format the image was decoded from, if any.
    public var sourceFormat: ImageFormat?
    /// Whether the source had an alpha channel (or transparency), so that saving it as JPEG
    /// would lose information.
    public var hasAlpha: Bool
    /// What the decoder worked around and reported without failing (libjpeg's "Corrupt JPEG
    /// data: 3 extraneous bytes before marker 0xdb", libpng's CRC warning on an ancillary chunk,
    /// a GIF without its trailer): the image is complete and as a browser shows it.
    public var warnings: [String] = []
    /// Whether the data ended before the image did and only part of it was decoded
    /// (``DecodeOptions/acceptsTruncatedImages``). A partial image is never cached.
    public var isPartial = false
    /// The ICC profile the pixels are in; nil means sRGB. Decoding converts to sRGB and leaves
    /// this nil unless ``DecodeOptions/keepsColorProfile`` asks to keep the source's profile
    /// (a PNG's `gAMA`/`cHRM` chunks become a profile). Encoders embed it, so the colours stay
    /// as they were.
    public var colorProfile: Data?
    /// The source's EXIF, as TIFF-structured bytes, when ``DecodeOptions/keepsEXIF`` asked for
    /// it. Encoders write it with its Orientation entry set to ``orientation`` (1 once the pixels
    /// are upright).
    public var exif: Data?
    /// How the source file describes its colour (bit depth, primaries, transfer, gain map), when
    /// its decoder reads it: AVIF, PNG, JPEG, HEIF, JPEG XL, TIFF and videos. The pixels
    /// themselves are 8-bit; an HDR AVIF (``ColorDescription/isHDR``) was tone-mapped to them.
    public var sourceColor: ColorDescription?

    /// A still image.
    public init(
        pixels: PixelBuffer,
        scale: Double = 1,
        orientation: ExifOrientation = .up,
        sourceFormat: ImageFormat? = nil,
        hasAlpha: Bool? = nil
    ) {
        self.init(
            frames: [ImageFrame(pixels: pixels)], loopCount: 0, scale: scale, orientation: orientation,
            sourceFormat: sourceFormat, hasAlpha: hasAlpha ?? !pixels.isOpaque)
    }

    /// An image of one or more frames.
    public init(
        frames: [ImageFrame],
        loopCount: Int = 0,
        scale: Double = 1,
        orientation: ExifOrientation = .up,
        sourceFormat: ImageFormat? = nil,
        hasAlpha: Bool
    ) {
        precondition(!frames.isEmpty, "an image has at least one frame")
        self.frames = frames
        self.loopCount = loopCount
        self.scale = scale
        self.orientation = orientation
        self.sourceFormat = sourceFormat
        self.hasAlpha = hasAlpha
    }

    /// The first frame's pixels: the still image, or an animation's poster.
    public var pixels: PixelBuffer { frames[0].pixels }
    /// Width in pixels, as stored.
    public var pixelWidth: Int { pixels.width }
    /// Height in pixels, as stored.
    public var pixelHeight: Int { pixels.height }
    /// Whether there is more than one frame.
    public var isAnimated: Bool { frames.count > 1 }
    /// The bytes the decoded frames take: what a memory cache charges.
    public var memoryCost: Int { frames.reduce(0) { $0 + $1.pixels.bytes.count } + (colorProfile?.count ?? 0) + (exif?.count ?? 0) }

    /// The scale SDWebImage gives an image from its key: 3 when the key contains `@3x.`, else
    /// 2 when it contains `@2x.`, for keys of at least 8 characters; otherwise 1 (Linux has no
    /// screen scale to fall back on).
    public static func scale(forKey key: String) -> Double {
        guard key.count >= 8 else { return 1 }
        if key.contains("@3x.") { return 3 }
        if key.contains("@2x.") { return 2 }
        return 1
    }
}
