package import Foundation
package import WebImage

/// What a proxy URL asks for: imgproxy's processing options, parsed and checked
/// (``OptionsParser``), with imgproxy's defaults. ``canonical`` is the text form the result
/// cache and the `ETag` are keyed by, so two URLs that ask for the same thing in different words
/// (`rs:fill:300:200`, `rt:fill/w:300/h:200`) share one result.
package struct ProcessingOptions: Sendable, Equatable {
    /// How the image fits the requested size.
    package enum ResizingType: String, Sendable, CaseIterable {
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
    package struct Crop: Sendable, Equatable {
        /// Width in pixels, or a fraction of the image's when below 1; 0 keeps the full width.
        package var width: Double
        /// Height, as ``width``.
        package var height: Double
        /// Where the crop sits; nil uses the options' ``ProcessingOptions/gravity``.
        package var gravity: Gravity?
    }

    /// `trim:THRESHOLD:COLOR:EQUAL_HOR:EQUAL_VER`: the source's borders cut before anything else.
    package struct Trim: Sendable, Equatable {
        /// How far a channel may differ from the background and still be background.
        package var threshold: Double
        /// The background colour; nil takes the top-left pixel's.
        package var color: RGBAColor?
        /// Cut as much from the left as from the right (the smaller cut).
        package var equalHorizontal = false
        /// Cut as much from the top as from the bottom.
        package var equalVertical = false

        package init(threshold: Double) { self.threshold = threshold }
    }

    /// `watermark:OPACITY:POSITION:X:Y:SCALE`: the server's watermark laid over the result.
    package struct Watermark: Sendable, Equatable {
        /// 0...1, times the server's opacity; 0 lays nothing.
        package var opacity: Double
        /// The compass point it sits at (not `sm` or `fp`); ignored when ``replicate``.
        package var position = Gravity.Kind.center
        /// Tile it over the whole result (`re`).
        package var replicate = false
        /// Offsets: pixels (times the dpr) from 1 up, a share of the result below 1; with
        /// ``replicate`` the space between tiles.
        package var x = 0.0
        package var y = 0.0
        /// Fit it in this share of the result's size; nil keeps its own size.
        package var scale: Double?
        /// `watermark_size`/`wms:W:H` (paid edition): fit it, enlarging too, in W x H (a 0 side
        /// follows the other), when there is no ``scale``.
        package var size: (width: Int, height: Int)?
        /// `watermark_rotate`/`wmr` (paid edition): degrees clockwise. Default 0.
        package var rotation = 0.0
        /// `watermark_url`/`wmu` (paid edition): the watermark's image from this URL, fetched as a
        /// source, in place of the server's.
        package var url: URL?
        /// `watermark_text`/`wmt` (paid edition): the watermark drawn from this Pango markup
        /// (`TextWatermark`), in place of any image.
        package var text: String?
        /// `watermark_shadow`/`wmsh` (paid edition): the sigma of a black shadow blurred under
        /// the mark; 0 for none.
        package var shadow = 0.0

        package init(opacity: Double) { self.opacity = opacity }

        /// The canonical form's part.
        var canonical: String {
            var text = "wm:\(TransformSpec.format(opacity)):\(replicate ? "re" : position.rawValue)"
            text += ":\(TransformSpec.format(x)):\(TransformSpec.format(y)):\(scale.map(TransformSpec.format) ?? "")"
            if let size { text += ":wms:\(size.width):\(size.height)" }
            if rotation != 0 { text += ":wmr:\(TransformSpec.format(rotation))" }
            if let url { text += ":wmu:\(url.absoluteString)" }
            if shadow > 0 { text += ":wmsh:\(TransformSpec.format(shadow))" }
            if let markup = self.text { text += ":wmt:\(URLSigner.base64URL(Array(markup.utf8)))" }
            return text
        }

        package static func == (left: Watermark, right: Watermark) -> Bool {
            left.opacity == right.opacity && left.position == right.position && left.replicate == right.replicate && left.x == right.x
                && left.y == right.y && left.scale == right.scale && left.size?.width == right.size?.width
                && left.size?.height == right.size?.height && left.rotation == right.rotation && left.url == right.url
                && left.text == right.text && left.shadow == right.shadow
        }
    }

    /// The colour options of imgproxy's paid edition (`ColorFilterTransformer` has their effects).
    package struct ColorFilters: Sendable, Equatable {
        /// `brightness`/`br`: -255...255, added to each channel. Default 0.
        package var brightness = 0
        /// `contrast`/`co`: above 0, 1 unchanged. Default 1.
        package var contrast = 1.0
        /// `saturation`/`sa`: 0 or more, 1 unchanged. Default 1.
        package var saturation = 1.0
        /// `monochrome`/`mc:INTENSITY:COLOR`.
        package var monochrome: (intensity: Double, color: RGBAColor)?
        /// `duotone`/`dt:INTENSITY:DARK:LIGHT`.
        package var duotone: (intensity: Double, dark: RGBAColor, light: RGBAColor)?
        /// `colorize`/`col:OPACITY:COLOR:KEEP_ALPHA`.
        package var colorize: (opacity: Double, color: RGBAColor, keepsAlpha: Bool)?

        package init() {}

        /// Whether any of them changes a pixel.
        package var isActive: Bool {
            brightness != 0 || contrast != 1 || saturation != 1 || (monochrome?.intensity ?? 0) > 0 || (duotone?.intensity ?? 0) > 0
                || (colorize?.opacity ?? 0) > 0
        }

        var canonical: String {
            var parts = ["a:\(brightness):\(TransformSpec.format(contrast)):\(TransformSpec.format(saturation))"]
            if let monochrome, monochrome.intensity > 0 {
                parts.append("mc:\(TransformSpec.format(monochrome.intensity)):\(monochrome.color.hexString)")
            }
            if let duotone, duotone.intensity > 0 {
                parts.append("dt:\(TransformSpec.format(duotone.intensity)):\(duotone.dark.hexString):\(duotone.light.hexString)")
            }
            if let colorize, colorize.opacity > 0 {
                parts.append("col:\(TransformSpec.format(colorize.opacity)):\(colorize.color.hexString):\(colorize.keepsAlpha ? 1 : 0)")
            }
            return parts.joined(separator: "/")
        }

        package static func == (left: ColorFilters, right: ColorFilters) -> Bool { left.canonical == right.canonical }
    }

    /// `hashsum`/`hs:TYPE:HEX`: the source must have this digest, else 422.
    package struct Hashsum: Sendable, Equatable {
        package enum Kind: String, Sendable { case md5, sha1, sha256, sha512 }
        package var kind: Kind
        /// Lower-case hex.
        package var digest: String
    }

    /// `crop_aspect_ratio`'s arguments.
    package struct CropAspectRatio: Sendable, Equatable {
        /// Width over height, above 0.
        package var ratio: Double
        /// Grow the short side rather than shrink the long one.
        package var enlarge: Bool
    }

    /// Space added around the result (`padding:T:R:B:L`), in CSS order and shorthand.
    package struct Padding: Sendable, Equatable {
        package var top: Int
        package var right: Int
        package var bottom: Int
        package var left: Int
    }

    /// Default ``ResizingType/fit``.
    package var resizingType = ResizingType.fit
    /// Requested width in pixels; 0 derives it from the height and the aspect ratio.
    package var width = 0
    /// Requested height; 0 derives it from the width.
    package var height = 0
    /// The least width of the result.
    package var minWidth = 0
    /// The least height of the result.
    package var minHeight = 0
    /// Multiplies the size (after ``dpr``) along each axis. Default 1.
    package var zoomX = 1.0
    package var zoomY = 1.0
    /// Multiplies every size and padding. Default 1.
    package var dpr = 1.0
    /// Let an image grow past its own size. Default false.
    package var enlarge = false
    /// Extend the canvas to the requested size when the image is smaller. Default false.
    package var extend = false
    /// Where the image sits on an extended canvas.
    package var extendGravity = Gravity.center
    /// `extend_aspect_ratio`: grow the canvas to the requested box's aspect ratio when the image
    /// came out with another (imgproxy's `calcSizes`), after `extend`. Default false.
    package var extendAspectRatio = false
    /// Where the image sits on a canvas grown to the aspect ratio.
    package var extendAspectRatioGravity = Gravity.center
    /// Where `fill` and `crop` cut. Default centre.
    package var gravity = Gravity.center
    /// Borders cut from the source first (not for animations, as imgproxy).
    package var trim: Trim?
    /// A crop before resizing.
    package var crop: Crop?
    /// Space around the result, filled with the background (transparent without one).
    package var padding: Padding?
    /// Clockwise rotation in degrees, a multiple of 90.
    package var rotate = 0
    /// Turn the image upright by its EXIF orientation first. Default true.
    package var autoRotate = true
    /// Mirror left to right.
    package var flipHorizontally = false
    /// Mirror top to bottom.
    package var flipVertically = false
    /// The colour behind transparent pixels; nil keeps transparency where the format has it
    /// (white for JPEG).
    package var background: RGBAColor?
    /// The watermark, when the server has one configured.
    package var watermark: Watermark?
    /// `adjust`, `monochrome`, `duotone`, `colorize` (imgproxy's paid edition).
    package var colorFilters = ColorFilters()
    /// `background_alpha`/`bga`: the background's opacity, 0...1. Default 1.
    package var backgroundAlpha = 1.0
    /// `hashsum`: the digest the source must have.
    package var hashsum: Hashsum?
    /// `page`/`pg`: the frame or page used when the result is a still (or `da`). Default 0.
    package var page = 0
    /// `disable_animation`/`da`: every source is treated as a still. Default false.
    package var disableAnimation = false
    /// `resizing_algorithm`/`ra` (paid edition): the resize's kernel. imgproxy's names `nearest`,
    /// `linear`, `cubic`, `lanczos2`, `lanczos3`; default lanczos3.
    package var resizingAlgorithm = ResamplingFilter.lanczos3
    /// `crop_aspect_ratio`/`car:RATIO:ENLARGE` (paid edition): the crop's sides corrected to this
    /// width-to-height ratio, by shrinking one side (or growing one with `enlarge`, shrunk back
    /// to the image if it then overflows); nil or 0 leaves the crop as given.
    package var cropAspectRatio: CropAspectRatio?
    /// `unsharp_masking`/`ush`; nil applies none (the open-source edition's behaviour, and
    /// this server's default unless `IMGPROXY_UNSHARP_MASKING_MODE` sets one).
    package var unsharpMasking: UnsharpMasking?
    /// `autoquality`/`aq:size:…`; nil for none.
    package var autoquality: Autoquality?
    /// `format:best` (paid edition): every candidate format encoded and the smallest result kept.
    package var bestFormat = false
    /// `pages`/`pgs` (paid edition): this many pages or frames from ``page`` stacked top to
    /// bottom, left-aligned, when the result is a still. Default 1.
    package var pages = 1
    /// `keep_copyright`/`kcr`: when metadata is stripped, IFD0's Copyright and Artist stay
    /// (imgproxy's default true, `IMGPROXY_KEEP_COPYRIGHT`).
    package var keepCopyright = true
    /// `enforce_thumbnail`/`eth`: a HEIF source's embedded thumbnail replaces its main image
    /// (`IMGPROXY_ENFORCE_THUMBNAIL`). Default false.
    package var enforceThumbnail = false
    /// `video_thumbnail_second`/`vts` (imgproxy Pro's): the time of a video source's frame, in
    /// seconds; nil takes the first keyframe (`IMGPROXY_VIDEO_THUMBNAIL_SECOND`).
    package var videoThumbnailSecond: Double?
    /// `video_thumbnail_keyframes`/`vtk` (imgproxy Pro's): the last keyframe at or before the
    /// time instead of the exact frame (`IMGPROXY_VIDEO_THUMBNAIL_KEYFRAMES`). Default false.
    package var videoThumbnailKeyframes = false
    /// `video_thumbnail_tile`/`vtt` or `video_thumbnail_animation`/`vta` (imgproxy Pro's): a tile
    /// sheet or an animation of a video source's frames, the later option replacing the earlier.
    package var videoFrameLayout: VideoFrameLayout?
    /// Gaussian blur's sigma; 0 for none.
    package var blur = 0.0
    /// Unsharp mask's sigma; 0 for none.
    package var sharpen = 0.0
    /// Pixelation block size; 0 for none.
    package var pixelate = 0
    /// Lossy quality 1...100; 0 uses the format's or the server's default.
    package var quality = 0
    /// Quality per output format, over ``quality``.
    package var formatQuality: [ImageFormat: Int] = [:]
    /// `max_bytes`: for a lossy format, the quality is lowered until the result fits in this many
    /// bytes (or quality 10 is reached), as imgproxy's `saveImageToFitBytes`; 0 for no limit.
    package var maxBytes = 0
    /// The output format; nil keeps the source's (or negotiates one).
    package var format: ImageFormat?
    /// Anything; only changes the cache key.
    package var cacheBuster = ""
    /// Unix time after which the URL answers 404.
    package var expires: Int?
    /// The file name `Content-Disposition` gives, without extension.
    package var filename: String?
    /// `Content-Disposition: attachment` instead of `inline`.
    package var returnAttachment = false
    /// `strip_metadata`: leave the source's EXIF out of the result (imgproxy's default, true);
    /// false writes it, its orientation set to the result's.
    package var stripMetadata = true
    /// `strip_color_profile`: convert to sRGB and drop the profile (imgproxy's default, true);
    /// false keeps the source's pixels and embeds its profile.
    package var stripColorProfile = true
    /// `preserve_hdr`: a source of more than 8 bits a sample keeps them in a result whose format
    /// holds them (PNG: 16 bits, with its `cICP`; AVIF: 10 or 12, with its `nclx`; JPEG XL and TIFF: 16);
    /// otherwise, and by default, the result is 8-bit
    /// (PQ and HLG tone-mapped).
    package var preserveHDR = false

    /// `skip_processing`: sources in these formats are answered as they are, unless the URL asks
    /// for another format (imgproxy's `shouldSkipStandardProcessing`); the server's
    /// `IMGPROXY_SKIP_PROCESSING_FORMATS` and the URL's `skp` together.
    package var skipProcessing: Set<ImageFormat> = []
    /// `raw`: the source's bytes answered unprocessed, without the result cache (imgproxy streams
    /// them). Default false.
    package var raw = false
    /// The URL's own security limits (`msr`, `msfs`, `maf`, `mafr`, `mrd`), each nil to keep the
    /// server's; read only when the server allows them (imgproxy's `IMGPROXY_ALLOW_SECURITY_OPTIONS`).
    package var security = SecurityLimits()

    /// Limits a URL may set for itself in place of the server's, as imgproxy's security options.
    package struct SecurityLimits: Sendable, Equatable {
        /// `max_src_resolution`: the most pixels of the source (all frames together), from megapixels.
        package var sourcePixels: Int?
        /// `max_src_file_size`: the most bytes of the source; at most the server's own byte cap,
        /// which the shared download enforces while streaming.
        package var sourceBytes: Int?
        /// `max_animation_frames`: the most frames kept.
        package var animationFrames: Int?
        /// `max_animation_frame_resolution`: the most pixels of each frame of an animation, which
        /// then replaces the whole-source check; 0 keeps that check.
        package var animationFramePixels: Int?
        /// `max_result_dimension`: the largest width or height of the result; 0 keeps the server's.
        package var resultDimension: Int?

        package init() {}

        /// The canonical form's part: the limits set, in one order.
        var canonical: String? {
            let values = [sourcePixels, sourceBytes, animationFrames, animationFramePixels, resultDimension]
            guard values.contains(where: { $0 != nil }) else { return nil }
            return "sec:" + values.map { $0.map(String.init) ?? "" }.joined(separator: ":")
        }
    }

    /// imgproxy's defaults.
    package init() {}

    /// The quality to encode `format` at, in imgproxy's order (`ProcessingOptions.Quality` in its
    /// `processing/options.go`): the URL's ``quality``, else the URL's ``formatQuality`` for the
    /// format, else the server's `defaults` for the format, else `fallback`; a 0 anywhere is unset.
    func quality(for format: ImageFormat, defaults: [ImageFormat: Int] = [:], fallback: Int) -> Int {
        for candidate in [quality, formatQuality[format] ?? 0, defaults[format] ?? 0] where candidate > 0 { return candidate }
        return fallback
    }

    /// Every option that changes the pixels, in one fixed order and spelling. Options that do
    /// not change the result (`expires`, `filename`, `return_attachment`) are left out.
    package var canonical: String {
        var parts = ["rs:\(resizingType.rawValue):\(width):\(height):\(enlarge ? 1 : 0):\(extend ? 1 : 0)"]
        if extend, extendGravity != .center { parts.append("exg:\(extendGravity.canonical)") }
        if extendAspectRatio { parts.append("exar:\(extendAspectRatioGravity.canonical)") }
        if minWidth > 0 || minHeight > 0 { parts.append("min:\(minWidth):\(minHeight)") }
        if zoomX != 1 || zoomY != 1 { parts.append("z:\(TransformSpec.format(zoomX)):\(TransformSpec.format(zoomY))") }
        if dpr != 1 { parts.append("dpr:\(TransformSpec.format(dpr))") }
        if gravity != .center { parts.append("g:\(gravity.canonical)") }
        if let trim {
            parts.append(
                "t:\(TransformSpec.format(trim.threshold)):\(trim.color.map { String($0.hexString.dropFirst()) } ?? ""):"
                    + "\(trim.equalHorizontal ? 1 : 0):\(trim.equalVertical ? 1 : 0)")
        }
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
        if let watermark, watermark.opacity > 0 { parts.append(watermark.canonical) }
        if colorFilters.isActive { parts.append(colorFilters.canonical) }
        if backgroundAlpha != 1 { parts.append("bga:\(TransformSpec.format(backgroundAlpha))") }
        if let hashsum { parts.append("hs:\(hashsum.kind.rawValue):\(hashsum.digest)") }
        if page > 0 { parts.append("pg:\(page)") }
        if pages > 1 { parts.append("pgs:\(pages)") }
        if resizingAlgorithm != .lanczos3 { parts.append("ra:\(resizingAlgorithm.rawValue)") }
        if let cropAspectRatio, crop != nil {
            parts.append("car:\(TransformSpec.format(cropAspectRatio.ratio)):\(cropAspectRatio.enlarge ? 1 : 0)")
        }
        if let unsharpMasking, unsharpMasking.mode != .none {
            parts.append(
                "ush:\(unsharpMasking.mode.rawValue):\(TransformSpec.format(unsharpMasking.weight)):\(TransformSpec.format(unsharpMasking.divider))"
            )
        }
        if let autoquality { parts.append("aq:size:\(autoquality.target):\(autoquality.minimum):\(autoquality.maximum)") }
        if bestFormat { parts.append("f:best") }
        if enforceThumbnail { parts.append("eth:1") }
        if let videoThumbnailSecond { parts.append("vts:\(TransformSpec.format(videoThumbnailSecond))") }
        if videoThumbnailKeyframes { parts.append("vtk:1") }
        if let videoFrameLayout { parts.append(videoFrameLayout.canonical) }
        if disableAnimation { parts.append("da:1") }
        if quality > 0 { parts.append("q:\(quality)") }
        for (format, value) in formatQuality.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            parts.append("fq:\(format.rawValue):\(value)")
        }
        if maxBytes > 0 { parts.append("mb:\(maxBytes)") }
        if !stripMetadata { parts.append("sm:0") } else if !keepCopyright { parts.append("kcr:0") }
        if !stripColorProfile { parts.append("scp:0") }
        if preserveHDR { parts.append("ph:1") }
        if !cacheBuster.isEmpty { parts.append("cb:\(cacheBuster)") }
        if let security = security.canonical { parts.append(security) }
        if !skipProcessing.isEmpty { parts.append("skp:" + skipProcessing.map(\.rawValue).sorted().joined(separator: ":")) }
        return parts.joined(separator: "/")
    }
}
