/// How to encode.
public struct EncodeOptions: Sendable, Equatable {
    /// How much colour detail JPEG keeps against brightness.
    public enum ChromaSubsampling: String, Sendable, CaseIterable {
        /// 4:4:4: colour at full resolution (sharp coloured edges, text, graphics).
        case none = "444"
        /// 4:2:2: colour at half the horizontal resolution.
        case horizontal = "422"
        /// 4:2:0: colour at half the resolution both ways (photographs; the smallest files).
        case both = "420"
    }

    /// Lossy quality from 0 (smallest) to 1 (best). Default 0.9. Lossless formats ignore it.
    public var quality: Double
    /// Encode losslessly where the format can choose (WebP). Default false.
    public var lossless: Bool
    /// JPEG's chroma subsampling. Default ``ChromaSubsampling/both`` (4:2:0), as most encoders.
    public var chromaSubsampling: ChromaSubsampling
    /// JPEG: write a progressive file (scans of increasing detail) instead of a baseline one.
    /// Default false.
    public var progressive: Bool
    /// The largest file wanted, in bytes (SDWebImage's `encodeMaxFileSize`): for a lossy
    /// encoding, the highest quality up to ``quality`` whose file fits is used, and when none
    /// does, the lowest. Nil (the default) encodes at ``quality`` whatever the size. Lossless
    /// encodings are not searched.
    public var maximumFileSize: Int?
    /// WebP's effort, 0 (fastest) to 6 (smallest files). Default 4, libwebp's own.
    public var webPMethod: Int
    /// AVIF encoder speed, 0 (slowest, smallest) to 10 (fastest). Default 6, imgproxy's and
    /// Pillow's default.
    public var avifSpeed: Int
    /// JPEG XL encoder effort, 1 (fastest) to 9 (smallest files). Default 7, cjxl's own.
    public var jxlEffort: Int
    /// libwebp's preset, which tunes its filters for the kind of picture. Default `default`.
    public var webPPreset = WebPEncodingPreset.default
    /// PNG's deflate level, libdeflate's, 0 (stored, fastest) to 9 (smallest files); out-of-range
    /// values are clamped. Every level is lossless. Default 4: libdeflate at 4 writes a file about
    /// the size zlib's level 6 (libvips' and imgproxy's) makes of the same rows, in half the time
    /// libdeflate's own 6 takes.
    public var pngCompressionLevel = 4
    /// PNG: write an Adam7-interlaced file, which a browser shows coarse first (imgproxy's
    /// `IMGPROXY_PNG_INTERLACED`). Default false.
    public var pngInterlaced = false
    /// PNG: reduce a still image to a palette of at most this many colours, 2 to 256 (imgproxy's
    /// `IMGPROXY_PNG_QUANTIZE` with `IMGPROXY_PNG_QUANTIZATION_COLORS`), for smaller files. An
    /// image with no more colours than this keeps them exactly; one with more is lossy (median
    /// cut with dithering). Nil (the default) keeps every colour. Animated PNGs ignore it (their
    /// frames would need one shared palette).
    public var pngPaletteColors: Int?

    /// Creates options.
    public init(
        quality: Double = 0.9, lossless: Bool = false, chromaSubsampling: ChromaSubsampling = .both, progressive: Bool = false,
        maximumFileSize: Int? = nil, webPMethod: Int = 4, avifSpeed: Int = 6, jxlEffort: Int = 7
    ) {
        self.jxlEffort = min(9, max(1, jxlEffort))
        self.avifSpeed = min(10, max(0, avifSpeed))
        self.quality = min(1, max(0, quality))
        self.lossless = lossless
        self.chromaSubsampling = chromaSubsampling
        self.progressive = progressive
        self.maximumFileSize = maximumFileSize
        self.webPMethod = min(6, max(0, webPMethod))
    }
}

/// libwebp's encoding presets (`WebPConfigPreset`), by imgproxy's names (`IMGPROXY_WEBP_PRESET`).
public enum WebPEncodingPreset: String, Sendable, CaseIterable {
    /// libwebp's defaults.
    case `default`
    /// Digital pictures, such as portraits and inner shots.
    case picture
    /// Outdoor photographs, with natural lighting.
    case photo
    /// Hand or line drawings, with high-contrast details.
    case drawing
    /// Small-sized colourful images.
    case icon
    /// Text-like images.
    case text
}
