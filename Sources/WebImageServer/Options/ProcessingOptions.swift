public import WebImage

/// What a proxy URL asks for: imgproxy's processing options, parsed and checked
/// (``OptionsParser``), with imgproxy's defaults. ``canonical`` is the text form the result
/// cache and the `ETag` are keyed by, so two URLs that ask for the same thing in different words
/// (`rs:fill:300:200`, `rt:fill/w:300/h:200`) share one result.
public struct ProcessingOptions: Sendable, Equatable {
    /// How the image fits the requested size.
    public enum ResizingType: String, Sendable, CaseIterable {
        /// Inside the box, keeping the aspect ratio.
        case fit
        /// Cover the box, then crop what overflows by the gravity.
        case fill
        /// As `fill`, but never enlarged: a smaller image is cropped to the box's aspect ratio.
        case fillDown = "fill-down"
        /// Exactly the box, ignoring the aspect ratio.
        case force
        /// `fill` when the image and the box are both portrait or both landscape, else `fit`.
        case auto
    }

    /// A crop applied to the source before resizing (`crop:W:H:GRAVITY`).
    public struct Crop: Sendable, Equatable {
        /// Width in pixels, or a fraction of the image's when below 1; 0 keeps the full width.
        public var width: Double
        /// Height, as ``width``.
        public var height: Double
        /// Where the crop sits; nil uses the options' ``ProcessingOptions/gravity``.
        public var gravity: Gravity?
    }

    /// Space added around the result (`padding:T:R:B:L`), in CSS order and shorthand.
    public struct Padding: Sendable, Equatable {
        public var top: Int
        public var right: Int
        public var bottom: Int
        public var left: Int
    }

    /// Default ``ResizingType/fit``.
    public var resizingType = ResizingType.fit
    /// Requested width in pixels; 0 derives it from the height and the aspect ratio.
    public var width = 0
    /// Requested height; 0 derives it from the width.
    public var height = 0
    /// The least width of the result.
    public var minWidth = 0
    /// The least height of the result.
    public var minHeight = 0
    /// Multiplies the size (after ``dpr``) along each axis. Default 1.
    public var zoomX = 1.0
    public var zoomY = 1.0
    /// Multiplies every size and padding. Default 1.
    public var dpr = 1.0
    /// Let an image grow past its own size. Default false.
    public var enlarge = false
    /// Extend the canvas to the requested size when the image is smaller. Default false.
    public var extend = false
    /// Where the image sits on an extended canvas.
    public var extendGravity = Gravity.center
    /// Where `fill` and `crop` cut. Default centre.
    public var gravity = Gravity.center
    /// A crop before resizing.
    public var crop: Crop?
    /// Space around the result, filled with the background (transparent without one).
    public var padding: Padding?
    /// Clockwise rotation in degrees, a multiple of 90.
    public var rotate = 0
    /// Turn the image upright by its EXIF orientation first. Default true.
    public var autoRotate = true
    /// Mirror left to right.
    public var flipHorizontally = false
    /// Mirror top to bottom.
    public var flipVertically = false
    /// The colour behind transparent pixels; nil keeps transparency where the format has it
    /// (white for JPEG).
    public var background: RGBAColor?
    /// Gaussian blur's sigma; 0 for none.
    public var blur = 0.0
    /// Unsharp mask's sigma; 0 for none.
    public var sharpen = 0.0
    /// Pixelation block size; 0 for none.
    public var pixelate = 0
    /// Lossy quality 1...100; 0 uses the format's or the server's default.
    public var quality = 0
    /// Quality per output format, over ``quality``.
    public var formatQuality: [ImageFormat: Int] = [:]
    /// The output format; nil keeps the source's (or negotiates one).
    public var format: ImageFormat?
    /// Anything; only changes the cache key.
    public var cacheBuster = ""
    /// Unix time after which the URL answers 404.
    public var expires: Int?
    /// The file name `Content-Disposition` gives, without extension.
    public var filename: String?
    /// `Content-Disposition: attachment` instead of `inline`.
    public var returnAttachment = false
    /// `strip_metadata`: leave the source's EXIF out of the result (imgproxy's default, true);
    /// false writes it, its orientation set to the result's.
    public var stripMetadata = true
    /// `strip_color_profile`: convert to sRGB and drop the profile (imgproxy's default, true);
    /// false keeps the source's pixels and embeds its profile.
    public var stripColorProfile = true

    /// imgproxy's defaults.
    public init() {}

    /// The quality to encode `format` at, in imgproxy's order (`ProcessingOptions.Quality` in its
    /// `processing/options.go`): the URL's ``quality``, else the URL's ``formatQuality`` for the
    /// format, else the server's `defaults` for the format, else `fallback`; a 0 anywhere is unset.
    func quality(for format: ImageFormat, defaults: [ImageFormat: Int] = [:], fallback: Int) -> Int {
        for candidate in [quality, formatQuality[format] ?? 0, defaults[format] ?? 0] where candidate > 0 { return candidate }
        return fallback
    }

    /// Every option that changes the pixels, in one fixed order and spelling. Options that do
    /// not change the result (`expires`, `filename`, `return_attachment`) are left out.
    public var canonical: String {
        var parts = ["rs:\(resizingType.rawValue):\(width):\(height):\(enlarge ? 1 : 0):\(extend ? 1 : 0)"]
        if extend, extendGravity != .center { parts.append("exg:\(extendGravity.canonical)") }
        if minWidth > 0 || minHeight > 0 { parts.append("min:\(minWidth):\(minHeight)") }
        if zoomX != 1 || zoomY != 1 { parts.append("z:\(TransformSpec.format(zoomX)):\(TransformSpec.format(zoomY))") }
        if dpr != 1 { parts.append("dpr:\(TransformSpec.format(dpr))") }
        if gravity != .center { parts.append("g:\(gravity.canonical)") }
        if let crop {
            parts.append(
                "c:\(TransformSpec.format(crop.width)):\(TransformSpec.format(crop.height))"
                    + (crop.gravity.map { ":" + $0.canonical } ?? ""))
        }
        if let padding { parts.append("pd:\(padding.top):\(padding.right):\(padding.bottom):\(padding.left)") }
        if rotate != 0 { parts.append("rot:\(rotate)") }
        if !autoRotate { parts.append("ar:0") }
        if flipHorizontally || flipVertically { parts.append("fl:\(flipHorizontally ? 1 : 0):\(flipVertically ? 1 : 0)") }
        if let background { parts.append("bg:\(background.hexString.dropFirst())") }
        if blur > 0 { parts.append("bl:\(TransformSpec.format(blur))") }
        if sharpen > 0 { parts.append("sh:\(TransformSpec.format(sharpen))") }
        if pixelate > 1 { parts.append("pix:\(pixelate)") }
        if quality > 0 { parts.append("q:\(quality)") }
        for (format, value) in formatQuality.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            parts.append("fq:\(format.rawValue):\(value)")
        }
        if !stripMetadata { parts.append("sm:0") }
        if !stripColorProfile { parts.append("scp:0") }
        if !cacheBuster.isEmpty { parts.append("cb:\(cacheBuster)") }
        return parts.joined(separator: "/")
    }
}
